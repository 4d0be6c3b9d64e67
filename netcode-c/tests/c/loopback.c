/*
    Loopback clients: a server slot and a client object in the same process
    joined by their send_loopback_packet callbacks, beside a regular client
    over 127.0.0.1 UDP in the next slot. Payloads both ways checked with
    their sequences; no keep-alives or timeouts for the loopback pair (10 s
    pass, the UDP client times out); disconnect_all_clients leaves the loopback slot; both
    ends disconnect and reconnect; and, as of 1.4.7, loopback without a
    callback is refused on both sides.
*/

#include "common.h"

struct wiring
{
    struct netcode_server_t * server;
    struct netcode_client_t * client; /* the loopback client of slot 0 */
    int to_client;                    /* packets the server's callback carried */
    int to_server;
    int bad;
    int server_connects;
    int server_disconnects;
    int client_changes;
    int client_current;
};

static void server_sends( void * context, int client_index, const uint8_t * data, int bytes, uint64_t sequence )
{
    struct wiring * w = (struct wiring *) context;
    if ( client_index != 0 || w->client == NULL )
    {
        w->bad++;
        return;
    }
    w->to_client++;
    netcode_client_process_loopback_packet( w->client, data, bytes, sequence );
}

static void client_sends( void * context, int client_index, const uint8_t * data, int bytes, uint64_t sequence )
{
    struct wiring * w = (struct wiring *) context;
    if ( client_index != 0 )
    {
        w->bad++;
        return;
    }
    w->to_server++;
    netcode_server_process_loopback_packet( w->server, client_index, data, bytes, sequence );
}

static void on_connect_disconnect( void * context, int client_index, int connected )
{
    struct wiring * w = (struct wiring *) context;
    say( "server callback: client %d %s", client_index, connected ? "connected" : "disconnected" );
    if ( connected )
        w->server_connects++;
    else
        w->server_disconnects++;
}

static void on_state_change( void * context, int previous, int current )
{
    struct wiring * w = (struct wiring *) context;
    say( "loopback client callback: %s -> %s", state_name( previous ), state_name( current ) );
    w->client_changes++;
    w->client_current = current;
}

/* Ten payloads each way through the callbacks, checked with their sequences. */
static void exchange( struct wiring * w, double t )
{
    uint8_t data[NETCODE_MAX_PACKET_SIZE];
    int i, bytes, got_server = 0, got_client = 0;
    uint64_t sequence, expected_to_server[10], expected_to_client[10];
    uint8_t * packet;
    for ( i = 0; i < 10; i++ )
    {
        int n = i == 9 ? NETCODE_MAX_PACKET_SIZE : i * 100 + 1;
        fill_payload( data, n, 3 );
        expected_to_server[i] = netcode_client_next_packet_sequence( w->client );
        netcode_client_send_packet( w->client, data, n );
        fill_payload( data, n, 4 );
        expected_to_client[i] = netcode_server_next_packet_sequence( w->server, 0 );
        netcode_server_send_packet( w->server, 0, data, n );
    }
    netcode_server_update( w->server, t );
    netcode_client_update( w->client, t );
    while ( ( packet = netcode_server_receive_packet( w->server, 0, &bytes, &sequence ) ) != NULL )
    {
        CHECK( got_server < 10 );
        if ( got_server < 10 )
        {
            CHECK( bytes == ( got_server == 9 ? NETCODE_MAX_PACKET_SIZE : got_server * 100 + 1 ) );
            CHECK( sequence == expected_to_server[got_server] );
        }
        CHECK( payload_ok( packet, bytes, 3 ) );
        got_server++;
        netcode_server_free_packet( w->server, packet );
    }
    while ( ( packet = netcode_client_receive_packet( w->client, &bytes, &sequence ) ) != NULL )
    {
        CHECK( got_client < 10 );
        if ( got_client < 10 )
        {
            CHECK( bytes == ( got_client == 9 ? NETCODE_MAX_PACKET_SIZE : got_client * 100 + 1 ) );
            CHECK( sequence == expected_to_client[got_client] );
        }
        CHECK( payload_ok( packet, bytes, 4 ) );
        got_client++;
        netcode_client_free_packet( w->client, packet );
    }
    say( "loopback payloads: %d to the server, %d to the client, checked with their sequences", got_server, got_client );
    CHECK( got_server == 10 );
    CHECK( got_client == 10 );
}

static void connect_loopback_pair( struct wiring * w )
{
    uint8_t user_data[NETCODE_USER_DATA_BYTES];
    uint8_t * back;
    int connects = w->server_connects, changes = w->client_changes;
    memset( user_data, 0x5c, sizeof( user_data ) );
    netcode_server_connect_loopback_client( w->server, 0, 0xabcdefULL, user_data );
    CHECK( w->server_connects == connects + 1 );
    CHECK( netcode_server_client_connected( w->server, 0 ) == 1 );
    CHECK( netcode_server_client_loopback( w->server, 0 ) == 1 );
    CHECK( netcode_server_client_id( w->server, 0 ) == 0xabcdefULL );
    back = (uint8_t *) netcode_server_client_user_data( w->server, 0 );
    CHECK( back != NULL && memcmp( back, user_data, sizeof( user_data ) ) == 0 );
    CHECK( netcode_server_client_disconnect_reason( w->server, 0 ) == NETCODE_SERVER_CLIENT_DISCONNECT_REASON_NONE );

    netcode_client_connect_loopback( w->client, 0, 2 );
    CHECK( netcode_client_state( w->client ) == NETCODE_CLIENT_STATE_CONNECTED );
    CHECK( netcode_client_loopback( w->client ) == 1 );
    CHECK( netcode_client_index( w->client ) == 0 );
    CHECK( netcode_client_max_clients( w->client ) == 2 );
    /* As the reference: connect_loopback sets the state without a callback. */
    CHECK( w->client_changes == changes );
    say( "loopback client connected in slot 0" );
}

int main( void )
{
    struct wiring w;
    struct netcode_server_config_t server_config;
    struct netcode_client_config_t client_config;
    struct netcode_client_t * regular;
    struct netcode_server_t * refusing_server;
    struct netcode_client_t * refusing_client;
    char address[64];
    const char * list[1];
    uint8_t token[NETCODE_CONNECT_TOKEN_BYTES];
    uint8_t data[16];
    double t = 10.0, deadline;

    memset( &w, 0, sizeof( w ) );
    start_test( "loopback", NETCODE_LOG_LEVEL_INFO );
    free_ipv4_address( address );
    server_config_for_tests( &server_config );
    server_config.callback_context = &w;
    server_config.connect_disconnect_callback = on_connect_disconnect;
    server_config.send_loopback_packet_callback = server_sends;
    w.server = netcode_server_create( address, &server_config, t );
    REQUIRE( w.server != NULL );
    netcode_server_start( w.server, 2 );

    netcode_default_client_config( &client_config );
    client_config.callback_context = &w;
    client_config.state_change_callback = on_state_change;
    client_config.send_loopback_packet_callback = client_sends;
    w.client = netcode_client_create( "0.0.0.0", &client_config, t );
    REQUIRE( w.client != NULL );

    connect_loopback_pair( &w );
    CHECK( netcode_server_num_connected_clients( w.server ) == 1 );

    /* A regular client over UDP takes slot 1. */
    {
        struct netcode_client_config_t plain;
        netcode_default_client_config( &plain );
        regular = netcode_client_create( "0.0.0.0", &plain, t );
    }
    REQUIRE( regular != NULL );
    list[0] = address;
    REQUIRE( make_token( 1, list, 30, 5, 77, NULL, token ) == NETCODE_OK );
    netcode_client_connect( regular, token );
    deadline = wall_seconds() + 8.0;
    while ( netcode_client_state( regular ) != NETCODE_CLIENT_STATE_CONNECTED && wall_seconds() < deadline )
    {
        t += 0.02;
        netcode_client_update( regular, t );
        netcode_server_update( w.server, t );
        netcode_client_update( w.client, t );
        sleep_seconds( 0.002 );
    }
    CHECK( netcode_client_state( regular ) == NETCODE_CLIENT_STATE_CONNECTED );
    CHECK( netcode_client_index( regular ) == 1 );
    CHECK( netcode_server_num_connected_clients( w.server ) == 2 );
    CHECK( netcode_server_client_loopback( w.server, 1 ) == 0 );
    say( "regular client connected in slot 1 beside the loopback client" );

    exchange( &w, t );
    CHECK( w.bad == 0 );

    /* No keep-alives or timeouts for loopback: 10 s later (in steps of
       half a second) the silent UDP client has timed out (its token says
       5 s), the loopback pair has not. */
    {
        int step;
        for ( step = 0; step < 20; step++ )
        {
            t += 0.5;
            netcode_server_update( w.server, t );
            netcode_client_update( w.client, t );
        }
    }
    CHECK( netcode_server_client_connected( w.server, 1 ) == 0 );
    CHECK( netcode_server_client_disconnect_reason( w.server, 1 ) == NETCODE_SERVER_CLIENT_DISCONNECT_REASON_TIMED_OUT );
    CHECK( netcode_server_client_connected( w.server, 0 ) == 1 );
    CHECK( netcode_client_state( w.client ) == NETCODE_CLIENT_STATE_CONNECTED );
    say( "after 10 s: the UDP client timed out, the loopback pair is still connected" );
    netcode_client_destroy( regular );

    netcode_server_disconnect_all_clients( w.server );
    CHECK( netcode_server_client_connected( w.server, 0 ) == 1 );
    netcode_server_disconnect_client( w.server, 0 );
    CHECK( netcode_server_client_connected( w.server, 0 ) == 1 );
    say( "disconnect_all_clients and disconnect_client leave the loopback slot alone" );
    exchange( &w, t );

    /* Both ends leave, then come back. */
    netcode_client_disconnect_loopback( w.client );
    CHECK( netcode_client_state( w.client ) == NETCODE_CLIENT_STATE_DISCONNECTED );
    CHECK( netcode_client_loopback( w.client ) == 0 );
    CHECK( w.client_current == NETCODE_CLIENT_STATE_DISCONNECTED );
    netcode_server_disconnect_loopback_client( w.server, 0 );
    CHECK( netcode_server_client_connected( w.server, 0 ) == 0 );
    CHECK( netcode_server_client_loopback( w.server, 0 ) == 0 );
    CHECK( netcode_server_num_connected_clients( w.server ) == 0 );
    CHECK( netcode_server_client_disconnect_reason( w.server, 0 ) == NETCODE_SERVER_CLIENT_DISCONNECT_REASON_SERVER_DISCONNECT );
    say( "loopback pair disconnected on both sides" );

    /* Loopback sizes out of range are ignored. */
    memset( data, 1, sizeof( data ) );
    connect_loopback_pair( &w );
    netcode_server_process_loopback_packet( w.server, 0, data, 0, 1 );
    netcode_client_process_loopback_packet( w.client, data, -1, 1 );
    {
        int bytes;
        uint64_t sequence;
        CHECK( netcode_server_receive_packet( w.server, 0, &bytes, &sequence ) == NULL );
        CHECK( netcode_client_receive_packet( w.client, &bytes, &sequence ) == NULL );
    }
    exchange( &w, t );
    netcode_client_disconnect_loopback( w.client );
    netcode_server_disconnect_loopback_client( w.server, 0 );

    /* 1.4.7: without a loopback callback, loopback connects are refused. */
    server_config_for_tests( &server_config );
    refusing_server = create_override_server( &server_config, ignore_send, t );
    netcode_server_start( refusing_server, 2 );
    netcode_server_connect_loopback_client( refusing_server, 0, 1, NULL );
    CHECK( netcode_server_client_connected( refusing_server, 0 ) == 0 );
    CHECK( netcode_server_num_connected_clients( refusing_server ) == 0 );
    netcode_default_client_config( &client_config );
    refusing_client = create_override_client( &client_config, ignore_send, t );
    netcode_client_connect_loopback( refusing_client, 0, 2 );
    CHECK( netcode_client_state( refusing_client ) == NETCODE_CLIENT_STATE_DISCONNECTED );
    CHECK( netcode_client_loopback( refusing_client ) == 0 );
    memset( data, 2, sizeof( data ) );
    netcode_client_send_packet( refusing_client, data, sizeof( data ) );
    say( "without send_loopback_packet_callback, loopback connects are refused on both sides" );
    netcode_client_destroy( refusing_client );
    netcode_server_destroy( refusing_server );

    netcode_client_destroy( w.client );
    w.client = NULL;
    netcode_server_destroy( w.server );
    CHECK( w.bad == 0 );
    /* loopback, regular, loopback again; regular timed out, loopback twice */
    CHECK( w.server_connects == 3 );
    CHECK( w.server_disconnects == 3 );
    netcode_term();
    return finish();
}
