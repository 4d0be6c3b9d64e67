/*
    A client and a server in one process over 127.0.0.1 UDP (and over
    [::1] when this machine has IPv6): connect, payloads of every size
    1..1200 both ways checked byte for byte and in order, the sequences the
    receiver sees, the accessors on both sides, the callbacks, a client
    side disconnect, a reconnect and a server side disconnect, and a stop
    with a client connected (what the slot answers inside the disconnect
    callback each time: the C library's slot is still populated there).
*/

#include "common.h"

struct server_events
{
    struct netcode_server_t * server;
    int connects;
    int disconnects;
    int last_index;
    /* What the slot answered inside the last disconnect callback: as in
       the C library, the slot is still populated there. */
    int reason_inside;
    uint64_t id_inside;
    int connected_inside;
};

struct client_events
{
    int changes;
    int previous;
    int current;
    int bad;
};

static void on_connect_disconnect( void * context, int client_index, int connected )
{
    struct server_events * e = (struct server_events *) context;
    if ( connected )
        e->connects++;
    else
    {
        e->disconnects++;
        e->reason_inside = netcode_server_client_disconnect_reason( e->server, client_index );
        e->id_inside = netcode_server_client_id( e->server, client_index );
        e->connected_inside = netcode_server_client_connected( e->server, client_index );
    }
    e->last_index = client_index;
    say( "server callback: client %d %s", client_index, connected ? "connected" : "disconnected" );
}

static void on_state_change( void * context, int previous, int current )
{
    struct client_events * e = (struct client_events *) context;
    /* previous must be the state the last change went to */
    if ( e->changes > 0 && previous != e->current )
        e->bad++;
    e->changes++;
    e->previous = previous;
    e->current = current;
    say( "client callback: %s -> %s", state_name( previous ), state_name( current ) );
}

#define PAYLOADS 300

/* Runs client and server frames until both are connected, or fails. */
static int run_until_connected( struct netcode_server_t * server, struct netcode_client_t * client, double * t )
{
    double deadline = wall_seconds() + 8.0;
    while ( wall_seconds() < deadline )
    {
        netcode_client_update( client, *t );
        netcode_server_update( server, *t );
        if ( netcode_client_state( client ) == NETCODE_CLIENT_STATE_CONNECTED
             && netcode_server_num_connected_clients( server ) == 1 )
            return 1;
        if ( netcode_client_state( client ) <= NETCODE_CLIENT_STATE_DISCONNECTED )
            break;
        *t += 0.02;
        sleep_seconds( 0.002 );
    }
    say( "not connected: client state %s, server has %d clients", state_name( netcode_client_state( client ) ),
         netcode_server_num_connected_clients( server ) );
    return 0;
}

/* Runs client frames for up to 3 s while the client is connected; whether
   it ended disconnected. */
static int run_until_disconnected( struct netcode_client_t * client, double * t )
{
    double deadline = wall_seconds() + 3.0;
    while ( netcode_client_state( client ) == NETCODE_CLIENT_STATE_CONNECTED && wall_seconds() < deadline )
    {
        *t += 0.02;
        netcode_client_update( client, *t );
        sleep_seconds( 0.002 );
    }
    return netcode_client_state( client ) == NETCODE_CLIENT_STATE_DISCONNECTED;
}

/* One session over the given family: connect, exchange, disconnect both ways. */
static void session( int ipv6, int port )
{
    char server_address[64];
    const char * servers[1];
    struct netcode_server_config_t server_config;
    struct netcode_client_config_t client_config;
    struct server_events server_events;
    struct client_events client_events;
    struct netcode_server_t * server;
    struct netcode_client_t * client;
    struct netcode_address_t parsed, *address;
    uint8_t token[NETCODE_CONNECT_TOKEN_BYTES];
    uint8_t user_data[NETCODE_USER_DATA_BYTES];
    uint8_t data[NETCODE_MAX_PACKET_SIZE];
    char text[256];
    double t = 100.0, deadline;
    int sent_to_server = 0, sent_to_client = 0, got_server = 0, got_client = 0, i;
    uint64_t last_server_sequence = 0, last_client_sequence = 0;
    uint64_t client_sequences[PAYLOADS];
    uint8_t * user_data_back;

    memset( &server_events, 0, sizeof( server_events ) );
    memset( &client_events, 0, sizeof( client_events ) );
    sprintf( server_address, ipv6 ? "[::1]:%d" : "127.0.0.1:%d", port );
    say( "--- session over %s", server_address );

    server_config_for_tests( &server_config );
    server_config.callback_context = &server_events;
    server_config.connect_disconnect_callback = on_connect_disconnect;
    server = netcode_server_create( server_address, &server_config, t );
    REQUIRE( server != NULL );
    server_events.server = server;
    CHECK( netcode_server_create_error() == NETCODE_SERVER_CREATE_ERROR_NONE );
    CHECK( netcode_server_running( server ) == 0 );
    CHECK( netcode_server_get_port( server ) == port );
    netcode_server_start( server, 4 );
    CHECK( netcode_server_running( server ) == 1 );
    CHECK( netcode_server_max_clients( server ) == 4 );
    CHECK( netcode_server_num_connected_clients( server ) == 0 );
    CHECK( netcode_server_client_disconnect_reason( server, 0 ) == NETCODE_SERVER_CLIENT_DISCONNECT_REASON_NONE );

    /* As the reference's own programs do: a 30 s token made after start,
       against the default 30 s lifetime. */
    for ( i = 0; i < NETCODE_USER_DATA_BYTES; i++ )
        user_data[i] = (uint8_t) ( i * 3 + 1 );
    servers[0] = server_address;
    REQUIRE( make_token( 1, servers, 30, 5, 0x1234567ULL, user_data, token ) == NETCODE_OK );

    netcode_default_client_config( &client_config );
    client_config.callback_context = &client_events;
    client_config.state_change_callback = on_state_change;
    client = netcode_client_create( ipv6 ? "[::]" : "0.0.0.0", &client_config, t );
    REQUIRE( client != NULL );
    CHECK( netcode_client_create_error() == NETCODE_CLIENT_CREATE_ERROR_NONE );
    CHECK( netcode_client_state( client ) == NETCODE_CLIENT_STATE_DISCONNECTED );
    CHECK( netcode_client_get_port( client ) != 0 );
    CHECK( netcode_client_loopback( client ) == 0 );

    netcode_client_connect( client, token );
    CHECK( netcode_client_state( client ) == NETCODE_CLIENT_STATE_SENDING_CONNECTION_REQUEST );
    CHECK( client_events.current == NETCODE_CLIENT_STATE_SENDING_CONNECTION_REQUEST );
    REQUIRE( run_until_connected( server, client, &t ) );
    say( "connected" );

    CHECK( client_events.current == NETCODE_CLIENT_STATE_CONNECTED );
    CHECK( client_events.bad == 0 );
    CHECK( server_events.connects == 1 && server_events.last_index == 0 );
    CHECK( netcode_client_index( client ) == 0 );
    CHECK( netcode_client_max_clients( client ) == 4 );
    CHECK( netcode_server_client_connected( server, 0 ) == 1 );
    CHECK( netcode_server_client_connected( server, 1 ) == 0 );
    CHECK( netcode_server_client_loopback( server, 0 ) == 0 );
    CHECK( netcode_server_client_id( server, 0 ) == 0x1234567ULL );
    user_data_back = (uint8_t *) netcode_server_client_user_data( server, 0 );
    CHECK( user_data_back != NULL && memcmp( user_data_back, user_data, NETCODE_USER_DATA_BYTES ) == 0 );
    CHECK( netcode_server_client_disconnect_reason( server, 0 ) == NETCODE_SERVER_CLIENT_DISCONNECT_REASON_NONE );

    REQUIRE( netcode_parse_address( server_address, &parsed ) == NETCODE_OK );
    address = netcode_client_server_address( client );
    CHECK( address != NULL && netcode_address_equal( address, &parsed ) );
    address = netcode_server_client_address( server, 0 );
    CHECK( address != NULL && address->type == ( ipv6 ? NETCODE_ADDRESS_IPV6 : NETCODE_ADDRESS_IPV4 ) );
    CHECK( address != NULL && address->port == netcode_client_get_port( client ) );
    if ( address )
        say( "server sees the client at %s", netcode_address_to_string( address, text ) );

    /* Payloads of sizes 1, 2, ... both ways, one each per frame. */
    deadline = wall_seconds() + 10.0;
    while ( ( got_server < PAYLOADS || got_client < PAYLOADS ) && wall_seconds() < deadline )
    {
        int bytes;
        uint64_t sequence;
        uint8_t * packet;
        if ( sent_to_server < PAYLOADS )
        {
            int n = ( sent_to_server * 4 ) % NETCODE_MAX_PACKET_SIZE + 1;
            if ( sent_to_server == PAYLOADS - 1 )
                n = NETCODE_MAX_PACKET_SIZE;
            fill_payload( data, n, 1 );
            client_sequences[sent_to_server] = netcode_client_next_packet_sequence( client );
            netcode_client_send_packet( client, data, n );
            sent_to_server++;
        }
        if ( sent_to_client < PAYLOADS )
        {
            int n = ( sent_to_client * 4 ) % NETCODE_MAX_PACKET_SIZE + 1;
            if ( sent_to_client == PAYLOADS - 1 )
                n = NETCODE_MAX_PACKET_SIZE;
            fill_payload( data, n, 2 );
            netcode_server_send_packet( server, 0, data, n );
            sent_to_client++;
        }
        netcode_client_update( client, t );
        netcode_server_update( server, t );
        while ( ( packet = netcode_server_receive_packet( server, 0, &bytes, &sequence ) ) != NULL )
        {
            int expected = got_server == PAYLOADS - 1 ? NETCODE_MAX_PACKET_SIZE : ( got_server * 4 ) % NETCODE_MAX_PACKET_SIZE + 1;
            CHECK( got_server < PAYLOADS );
            CHECK( bytes == expected );
            CHECK( payload_ok( packet, bytes, 1 ) );
            if ( got_server < PAYLOADS )
                CHECK( sequence == client_sequences[got_server] );
            CHECK( got_server == 0 || sequence > last_server_sequence );
            last_server_sequence = sequence;
            got_server++;
            netcode_server_free_packet( server, packet );
        }
        while ( ( packet = netcode_client_receive_packet( client, &bytes, &sequence ) ) != NULL )
        {
            int expected = got_client == PAYLOADS - 1 ? NETCODE_MAX_PACKET_SIZE : ( got_client * 4 ) % NETCODE_MAX_PACKET_SIZE + 1;
            CHECK( bytes == expected );
            CHECK( payload_ok( packet, bytes, 2 ) );
            CHECK( got_client == 0 || sequence > last_client_sequence );
            last_client_sequence = sequence;
            got_client++;
            netcode_client_free_packet( client, packet );
        }
        t += 0.02;
        sleep_seconds( 0.001 );
    }
    say( "payloads: %d of %d to the server, %d of %d to the client, every one checked", got_server, PAYLOADS,
         got_client, PAYLOADS );
    CHECK( got_server == PAYLOADS );
    CHECK( got_client == PAYLOADS );
    CHECK( netcode_server_next_packet_sequence( server, 0 ) > last_client_sequence );
    CHECK( netcode_client_next_packet_sequence( client ) > last_server_sequence );

    /* The client leaves: the server hears it within a few frames. */
    netcode_client_disconnect( client );
    CHECK( netcode_client_state( client ) == NETCODE_CLIENT_STATE_DISCONNECTED );
    CHECK( client_events.current == NETCODE_CLIENT_STATE_DISCONNECTED );
    CHECK( netcode_client_index( client ) == 0 && netcode_client_max_clients( client ) == 0 );
    deadline = wall_seconds() + 3.0;
    while ( netcode_server_client_connected( server, 0 ) && wall_seconds() < deadline )
    {
        t += 0.02;
        netcode_server_update( server, t );
        sleep_seconds( 0.002 );
    }
    CHECK( netcode_server_client_connected( server, 0 ) == 0 );
    CHECK( server_events.disconnects == 1 );
    CHECK( netcode_server_num_connected_clients( server ) == 0 );
    CHECK( netcode_server_client_disconnect_reason( server, 0 ) == NETCODE_SERVER_CLIENT_DISCONNECT_REASON_CLIENT_DISCONNECT );
    CHECK( server_events.reason_inside == NETCODE_SERVER_CLIENT_DISCONNECT_REASON_CLIENT_DISCONNECT );
    CHECK( server_events.id_inside == 0x1234567ULL && server_events.connected_inside == 1 );
    say( "client side disconnect seen by the server (inside the callback: reason %d, id %llx)",
         server_events.reason_inside, (unsigned long long) server_events.id_inside );

    /* A new token connects again; then the server kicks the client. */
    REQUIRE( make_token( 1, servers, 30, 5, 0x7654321ULL, NULL, token ) == NETCODE_OK );
    netcode_client_update( client, t );
    netcode_client_connect( client, token );
    REQUIRE( run_until_connected( server, client, &t ) );
    CHECK( netcode_server_client_id( server, 0 ) == 0x7654321ULL );
    CHECK( netcode_server_client_disconnect_reason( server, 0 ) == NETCODE_SERVER_CLIENT_DISCONNECT_REASON_NONE );
    user_data_back = (uint8_t *) netcode_server_client_user_data( server, 0 );
    memset( user_data, 0, sizeof( user_data ) );
    CHECK( user_data_back != NULL && memcmp( user_data_back, user_data, NETCODE_USER_DATA_BYTES ) == 0 );
    say( "reconnected with a new token" );

    netcode_server_disconnect_client( server, 0 );
    CHECK( netcode_server_client_connected( server, 0 ) == 0 );
    CHECK( netcode_server_client_disconnect_reason( server, 0 ) == NETCODE_SERVER_CLIENT_DISCONNECT_REASON_SERVER_DISCONNECT );
    CHECK( server_events.disconnects == 2 );
    CHECK( server_events.reason_inside == NETCODE_SERVER_CLIENT_DISCONNECT_REASON_SERVER_DISCONNECT );
    CHECK( server_events.id_inside == 0x7654321ULL && server_events.connected_inside == 1 );
    CHECK( run_until_disconnected( client, &t ) );
    say( "server side disconnect seen by the client: %s", state_name( netcode_client_state( client ) ) );

    /* Connected once more, then the server stops: the client is told. */
    REQUIRE( make_token( 1, servers, 30, 5, 0x1111ULL, NULL, token ) == NETCODE_OK );
    netcode_client_update( client, t );
    netcode_client_connect( client, token );
    REQUIRE( run_until_connected( server, client, &t ) );
    netcode_server_stop( server );
    CHECK( netcode_server_running( server ) == 0 );
    CHECK( netcode_server_max_clients( server ) == 0 );
    CHECK( netcode_server_num_connected_clients( server ) == 0 );
    CHECK( server_events.disconnects == 3 );
    CHECK( server_events.reason_inside == NETCODE_SERVER_CLIENT_DISCONNECT_REASON_SERVER_DISCONNECT );
    CHECK( server_events.id_inside == 0x1111ULL && server_events.connected_inside == 1 );
    say( "server stopped with a client connected (inside the callback: reason %d, id %llx, connected %d)",
         server_events.reason_inside, (unsigned long long) server_events.id_inside, server_events.connected_inside );
    CHECK( run_until_disconnected( client, &t ) );
    netcode_client_destroy( client );
    netcode_server_destroy( server );
    CHECK( client_events.bad == 0 );
}

int main( void )
{
    int port, port6;
    start_test( "client_server", NETCODE_LOG_LEVEL_INFO );

    port = free_udp_port( 0 );
    REQUIRE( port != 0 );
    session( 0, port );

    port6 = free_udp_port( 1 );
    if ( port6 != 0 )
        session( 1, port6 );
    else
        say( "SKIPPED the IPv6 session: no ::1 on this machine" );

    netcode_term();
    return finish();
}
