/*
    The header from C++ (built as C++98 and as C++17 by run.sh): string
    literals where the header says NETCODE_CONST, the config structs and
    their callbacks as C++ code writes them, and a client and a server in
    override mode connected through a std::deque, payloads both ways. It
    links against the C symbols, so extern "C" is checked too.
*/

#include "netcode.h"

#include <cstdio>
#include <cstring>
#include <deque>
#include <vector>

struct datagram
{
    netcode_address_t from;
    netcode_address_t to;
    std::vector<uint8_t> data;
};

struct endpoint
{
    netcode_address_t self;
};

/* 0x1122334455667788, spelled so that C++98 -pedantic takes it. */
static const uint64_t protocol_id = ( static_cast<uint64_t>( 0x11223344UL ) << 32 ) | 0x55667788UL;

static std::deque<datagram> network;
static int failures = 0;
static int state_changes = 0;

static void check( bool ok, const char * what )
{
    std::printf( "[cpp] %s: %s\n", ok ? "ok" : "CHECK FAILED", what );
    if ( !ok )
        ++failures;
}

extern "C" {

static void send_override( void * context, netcode_address_t * to, const uint8_t * data, int bytes )
{
    endpoint * e = static_cast<endpoint *>( context );
    datagram d;
    d.from = e->self;
    d.to = *to;
    d.data.assign( data, data + bytes );
    network.push_back( d );
}

static int receive_override( void * context, netcode_address_t * from, uint8_t * data, int bytes )
{
    endpoint * e = static_cast<endpoint *>( context );
    for ( std::deque<datagram>::iterator it = network.begin(); it != network.end(); ++it )
    {
        if ( netcode_address_equal( &it->to, &e->self ) && static_cast<int>( it->data.size() ) <= bytes )
        {
            int n = static_cast<int>( it->data.size() );
            *from = it->from;
            std::memcpy( data, &it->data[0], it->data.size() );
            network.erase( it );
            return n;
        }
    }
    return 0;
}

static void on_state( void *, int, int )
{
    ++state_changes;
}

}

int main()
{
    std::printf( "[cpp] netcode.h %s from C++ (__cplusplus %ld)\n", NETCODE_VERSION_FULL, static_cast<long>( __cplusplus ) );
    check( netcode_init() == NETCODE_OK, "netcode_init" );
    netcode_log_level( NETCODE_LOG_LEVEL_ERROR );

    endpoint server_end, client_end;
    check( netcode_parse_address( "10.99.0.1:40000", &server_end.self ) == NETCODE_OK, "parse a literal" );
    check( netcode_parse_address( "10.99.0.2:50000", &client_end.self ) == NETCODE_OK, "parse another" );
    char text[256];
    check( std::strcmp( netcode_address_to_string( &server_end.self, text ), "10.99.0.1:40000" ) == 0, "format" );

    netcode_server_config_t server_config;
    netcode_default_server_config( &server_config );
    server_config.protocol_id = protocol_id;
    netcode_random_bytes( server_config.private_key, NETCODE_KEY_BYTES );
    server_config.callback_context = &server_end;
    server_config.override_send_and_receive = 1;
    server_config.send_packet_override = send_override;
    server_config.receive_packet_override = receive_override;
    netcode_server_t * server = netcode_server_create( "10.99.0.1:40000", &server_config, 0.0 );
    check( server != 0, "server create" );
    if ( !server )
        return 1;
    netcode_server_start( server, 1 );

    netcode_client_config_t client_config;
    netcode_default_client_config( &client_config );
    client_config.callback_context = &client_end;
    client_config.state_change_callback = on_state;
    client_config.override_send_and_receive = 1;
    client_config.send_packet_override = send_override;
    client_config.receive_packet_override = receive_override;
    netcode_client_t * client = netcode_client_create( "10.99.0.2:50000", &client_config, 0.0 );
    check( client != 0, "client create" );
    if ( !client )
        return 1;

    const char * servers[] = { "10.99.0.1:40000" };
    std::vector<uint8_t> token( NETCODE_CONNECT_TOKEN_BYTES );
    check( netcode_generate_connect_token( 1, servers, servers, 30, 5, 7, protocol_id,
                                           server_config.private_key, 0, &token[0] ) == NETCODE_OK,
           "generate a connect token" );
    netcode_client_connect( client, &token[0] );

    double t = 0.0;
    int to_server = 0, to_client = 0;
    const uint8_t payload[] = { 'h', 'e', 'l', 'l', 'o' };
    for ( int frame = 0; frame < 200 && ( to_server < 5 || to_client < 5 ); ++frame )
    {
        t += 0.05;
        netcode_client_update( client, t );
        netcode_server_update( server, t );
        if ( netcode_client_state( client ) == NETCODE_CLIENT_STATE_CONNECTED )
        {
            netcode_client_send_packet( client, payload, sizeof( payload ) );
            netcode_server_send_packet( server, 0, payload, sizeof( payload ) );
        }
        int bytes = 0;
        uint64_t sequence = 0;
        while ( uint8_t * p = netcode_server_receive_packet( server, 0, &bytes, &sequence ) )
        {
            to_server += bytes == 5 && std::memcmp( p, payload, 5 ) == 0;
            netcode_server_free_packet( server, p );
        }
        while ( uint8_t * p = netcode_client_receive_packet( client, &bytes, &sequence ) )
        {
            to_client += bytes == 5 && std::memcmp( p, payload, 5 ) == 0;
            netcode_client_free_packet( client, p );
        }
    }
    check( netcode_client_state( client ) == NETCODE_CLIENT_STATE_CONNECTED, "connected" );
    check( state_changes >= 3, "state callbacks" );
    check( to_server >= 5 && to_client >= 5, "payloads both ways" );

    netcode_client_destroy( client );
    netcode_server_destroy( server );
    netcode_term();
    std::printf( "[cpp] %s\n", failures ? "FAILED" : "PASSED" );
    return failures ? 1 : 0;
}
