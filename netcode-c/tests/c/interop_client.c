/*
    A client on this library for the interop runs (run.sh): connects to
    ADDRESS (default 127.0.0.1:40000) with a token made with the examples'
    protocol id and key, sends the examples' payload (1200 bytes, byte i is
    i % 256) every frame at 60 Hz and checks every payload it receives.
    Stops after --seconds N (default 3) or when the connection ends; exits
    0 only if it connected, sent and received at least one payload, and
    every payload received was right.

    usage: interop_client [ADDRESS] [--seconds N]
*/

#include "common.h"

int main( int argc, char ** argv )
{
    const char * address = "127.0.0.1:40000";
    const char * list[1];
    double seconds = 3.0, started, now;
    struct netcode_client_config_t config;
    struct netcode_client_t * client;
    struct netcode_address_t parsed;
    uint8_t token[NETCODE_CONNECT_TOKEN_BYTES];
    uint8_t payload[NETCODE_MAX_PACKET_SIZE];
    uint64_t client_id;
    long sent = 0, received = 0, bad = 0;
    int connected = 0;

    start_interop( "interop client", argc, argv, &address, &seconds );
    REQUIRE( netcode_parse_address( address, &parsed ) == NETCODE_OK );

    netcode_default_client_config( &config );
    client = netcode_client_create( parsed.type == NETCODE_ADDRESS_IPV6 ? "[::]" : "0.0.0.0", &config, netcode_time() );
    REQUIRE( client != NULL );
    netcode_random_bytes( (uint8_t *) &client_id, 8 );
    list[0] = address;
    REQUIRE( make_token( 1, list, 30, 5, client_id, NULL, token ) == NETCODE_OK );
    say( "connecting to %s", address );
    netcode_client_connect( client, token );
    fill_example_payload( payload );

    started = netcode_time();
    while ( ( now = netcode_time() ) - started < seconds )
    {
        int bytes;
        uint64_t sequence;
        uint8_t * packet;
        netcode_client_update( client, now );
        if ( netcode_client_state( client ) == NETCODE_CLIENT_STATE_CONNECTED )
        {
            if ( !connected )
                say( "connected as client %d of %d", netcode_client_index( client ), netcode_client_max_clients( client ) );
            connected = 1;
            netcode_client_send_packet( client, payload, NETCODE_MAX_PACKET_SIZE );
            sent++;
        }
        while ( ( packet = netcode_client_receive_packet( client, &bytes, &sequence ) ) != NULL )
        {
            if ( bytes == NETCODE_MAX_PACKET_SIZE && memcmp( packet, payload, NETCODE_MAX_PACKET_SIZE ) == 0 )
                received++;
            else
                bad++;
            netcode_client_free_packet( client, packet );
        }
        if ( netcode_client_state( client ) <= NETCODE_CLIENT_STATE_DISCONNECTED )
        {
            say( "client state: %s", state_name( netcode_client_state( client ) ) );
            break;
        }
        netcode_sleep( 1.0 / 60.0 );
    }
    say( "sent %ld, received %ld good and %ld bad payloads", sent, received, bad );
    netcode_client_disconnect( client );
    netcode_client_destroy( client );
    netcode_term();
    CHECK( connected );
    CHECK( sent > 0 );
    CHECK( received > 0 );
    CHECK( bad == 0 );
    return finish();
}
