/*
    Garbage arguments: every function with NULL objects and pointers,
    negative and oversized sizes, out-of-range indices and max_clients,
    packets freed twice, by the wrong object or never handed out, an
    unsupported simulator pointer, bad addresses and token arguments. The
    process must survive each call (under the sanitizers too), return the
    error value, and log an error line where the call is a caller's mistake
    the library can see. Afterwards the objects still work.

    Each case prints one line: "logged" or "silent", and whether that is
    what it must be.
*/

#include "common.h"

#include <math.h>

static int cases = 0;

static void note( const char * what, int must_log, int logged )
{
    cases++;
    if ( must_log && !logged )
    {
        printf( "    [garbage] NO ERROR LOG: %s\n", what );
        test_failures++;
    }
    else
        printf( "    [garbage] %-6s %s\n", logged ? "logged" : "silent", what );
    fflush( stdout );
}

/* Runs the statement, noting whether the library logged during it. */
#define GARBAGE( must_log, statement )                      \
    do {                                                    \
        int garbage_before_ = log_lines;                    \
        statement;                                          \
        note( #statement, must_log, log_lines > garbage_before_ ); \
    } while ( 0 )

struct pair
{
    struct netcode_server_t * server;
    struct netcode_client_t * client;
};

static void server_sends( void * context, int client_index, const uint8_t * data, int bytes, uint64_t sequence )
{
    struct pair * p = (struct pair *) context;
    (void) client_index;
    netcode_client_process_loopback_packet( p->client, data, bytes, sequence );
}

static void client_sends( void * context, int client_index, const uint8_t * data, int bytes, uint64_t sequence )
{
    struct pair * p = (struct pair *) context;
    netcode_server_process_loopback_packet( p->server, client_index, data, bytes, sequence );
}

static int assert_calls = 0;

static void counting_assert( const char * condition, const char * function, const char * file, int line )
{
    (void) condition; (void) function; (void) file; (void) line;
    assert_calls++;
}

static void globals( void )
{
    struct netcode_address_t a;
    uint8_t buffer[64];
    char text[256];
    char * long_string;
    const char * good[2];
    const char * with_null[2];
    uint8_t token[NETCODE_CONNECT_TOKEN_BYTES];
    double started;

    say( "--- globals" );
    good[0] = "127.0.0.1:40000";
    good[1] = "127.0.0.1:40001";
    with_null[0] = "127.0.0.1:40000";
    with_null[1] = NULL;
    memset( &a, 0, sizeof( a ) );

    GARBAGE( 1, netcode_random_bytes( NULL, 16 ) );
    GARBAGE( 1, netcode_random_bytes( buffer, -1 ) );
    GARBAGE( 0, netcode_random_bytes( buffer, 0 ) );

    GARBAGE( 1, CHECK( netcode_parse_address( NULL, &a ) == NETCODE_ERROR ) );
    GARBAGE( 1, CHECK( netcode_parse_address( "127.0.0.1:40000", NULL ) == NETCODE_ERROR ) );
    GARBAGE( 0, CHECK( netcode_parse_address( "not an address", &a ) == NETCODE_ERROR ) );
    long_string = (char *) malloc( 100001 );
    REQUIRE( long_string != NULL );
    memset( long_string, '1', 100000 );
    long_string[100000] = '\0';
    GARBAGE( 0, CHECK( netcode_parse_address( long_string, &a ) == NETCODE_ERROR ) );
    free( long_string );

    GARBAGE( 1, netcode_address_to_string( NULL, text ) );
    GARBAGE( 1, CHECK( netcode_address_to_string( &a, NULL ) == NULL ) );
    memset( &a, 0xff, sizeof( a ) );
    a.type = 77;
    GARBAGE( 0, CHECK( netcode_address_to_string( &a, text ) != NULL ) );
    GARBAGE( 0, CHECK( netcode_address_equal( &a, &a ) == 0 ) );
    GARBAGE( 1, CHECK( netcode_address_equal( NULL, &a ) == 0 ) );
    GARBAGE( 1, CHECK( netcode_address_equal( &a, NULL ) == 0 ) );

    GARBAGE( 1, CHECK( netcode_generate_connect_token( 0, good, good, 30, 5, 1, TEST_PROTOCOL_ID, test_private_key, NULL, token ) == NETCODE_ERROR ) );
    GARBAGE( 1, CHECK( netcode_generate_connect_token( -1, good, good, 30, 5, 1, TEST_PROTOCOL_ID, test_private_key, NULL, token ) == NETCODE_ERROR ) );
    GARBAGE( 1, CHECK( netcode_generate_connect_token( 33, good, good, 30, 5, 1, TEST_PROTOCOL_ID, test_private_key, NULL, token ) == NETCODE_ERROR ) );
    GARBAGE( 1, CHECK( netcode_generate_connect_token( 1, NULL, good, 30, 5, 1, TEST_PROTOCOL_ID, test_private_key, NULL, token ) == NETCODE_ERROR ) );
    GARBAGE( 1, CHECK( netcode_generate_connect_token( 1, good, NULL, 30, 5, 1, TEST_PROTOCOL_ID, test_private_key, NULL, token ) == NETCODE_ERROR ) );
    GARBAGE( 1, CHECK( netcode_generate_connect_token( 2, with_null, good, 30, 5, 1, TEST_PROTOCOL_ID, test_private_key, NULL, token ) == NETCODE_ERROR ) );
    GARBAGE( 1, CHECK( netcode_generate_connect_token( 1, good, good, 30, 5, 1, TEST_PROTOCOL_ID, NULL, NULL, token ) == NETCODE_ERROR ) );
    GARBAGE( 1, CHECK( netcode_generate_connect_token( 1, good, good, 30, 5, 1, TEST_PROTOCOL_ID, test_private_key, NULL, NULL ) == NETCODE_ERROR ) );
    with_null[1] = "not an address";
    GARBAGE( 0, CHECK( netcode_generate_connect_token( 2, with_null, with_null, 30, 5, 1, TEST_PROTOCOL_ID, test_private_key, NULL, token ) == NETCODE_ERROR ) );
    GARBAGE( 0, CHECK( netcode_generate_connect_token( 1, good, good, -1, -1, 1, TEST_PROTOCOL_ID, test_private_key, NULL, token ) == NETCODE_OK ) );

    GARBAGE( 0, netcode_log_level( 99 ) );
    GARBAGE( 0, netcode_log_level( -7 ) );
    netcode_log_level( NETCODE_LOG_LEVEL_ERROR );

    started = wall_seconds();
    GARBAGE( 0, netcode_sleep( -1.0 ) );
    GARBAGE( 0, netcode_sleep( NAN ) );
    GARBAGE( 0, netcode_sleep( -INFINITY ) );
    CHECK( wall_seconds() - started < 1.0 );
}

static void null_objects( void )
{
    struct netcode_address_t a;
    uint8_t data[100];
    uint8_t token[NETCODE_CONNECT_TOKEN_BYTES];
    int bytes = 0;
    uint64_t sequence = 0;

    say( "--- NULL client and server objects" );
    memset( data, 1, sizeof( data ) );
    memset( token, 0, sizeof( token ) );
    REQUIRE( netcode_parse_address( "127.0.0.1:40000", &a ) == NETCODE_OK );

    GARBAGE( 1, netcode_client_destroy( NULL ) );
    GARBAGE( 1, netcode_client_connect( NULL, token ) );
    GARBAGE( 1, netcode_client_update( NULL, 1.0 ) );
    GARBAGE( 1, CHECK( netcode_client_next_packet_sequence( NULL ) == 0 ) );
    GARBAGE( 1, netcode_client_send_packet( NULL, data, 10 ) );
    GARBAGE( 1, CHECK( netcode_client_receive_packet( NULL, &bytes, &sequence ) == NULL ) );
    GARBAGE( 1, netcode_client_free_packet( NULL, data ) );
    GARBAGE( 1, netcode_client_disconnect( NULL ) );
    GARBAGE( 1, netcode_client_state( NULL ) );
    GARBAGE( 1, CHECK( netcode_client_index( NULL ) == 0 ) );
    GARBAGE( 1, CHECK( netcode_client_max_clients( NULL ) == 0 ) );
    GARBAGE( 1, netcode_client_connect_loopback( NULL, 0, 1 ) );
    GARBAGE( 1, netcode_client_disconnect_loopback( NULL ) );
    GARBAGE( 1, netcode_client_process_packet( NULL, &a, data, 10 ) );
    GARBAGE( 1, CHECK( netcode_client_loopback( NULL ) == 0 ) );
    GARBAGE( 1, netcode_client_process_loopback_packet( NULL, data, 10, 0 ) );
    GARBAGE( 1, CHECK( netcode_client_get_port( NULL ) == 0 ) );
    GARBAGE( 1, CHECK( netcode_client_server_address( NULL ) == NULL ) );

    GARBAGE( 1, netcode_server_destroy( NULL ) );
    GARBAGE( 1, netcode_server_start( NULL, 1 ) );
    GARBAGE( 1, netcode_server_stop( NULL ) );
    GARBAGE( 1, CHECK( netcode_server_running( NULL ) == 0 ) );
    GARBAGE( 1, CHECK( netcode_server_max_clients( NULL ) == 0 ) );
    GARBAGE( 1, netcode_server_update( NULL, 1.0 ) );
    GARBAGE( 1, CHECK( netcode_server_client_connected( NULL, 0 ) == 0 ) );
    GARBAGE( 1, netcode_server_client_disconnect_reason( NULL, 0 ) );
    GARBAGE( 1, CHECK( netcode_server_client_id( NULL, 0 ) == 0 ) );
    GARBAGE( 1, CHECK( netcode_server_client_address( NULL, 0 ) == NULL ) );
    GARBAGE( 1, netcode_server_disconnect_client( NULL, 0 ) );
    GARBAGE( 1, netcode_server_disconnect_all_clients( NULL ) );
    GARBAGE( 1, CHECK( netcode_server_next_packet_sequence( NULL, 0 ) == 0 ) );
    GARBAGE( 1, netcode_server_send_packet( NULL, 0, data, 10 ) );
    GARBAGE( 1, CHECK( netcode_server_receive_packet( NULL, 0, &bytes, &sequence ) == NULL ) );
    GARBAGE( 1, netcode_server_free_packet( NULL, data ) );
    GARBAGE( 1, CHECK( netcode_server_num_connected_clients( NULL ) == 0 ) );
    GARBAGE( 1, CHECK( netcode_server_client_user_data( NULL, 0 ) == NULL ) );
    GARBAGE( 1, netcode_server_process_packet( NULL, &a, data, 10 ) );
    GARBAGE( 1, netcode_server_connect_loopback_client( NULL, 0, 1, NULL ) );
    GARBAGE( 1, netcode_server_disconnect_loopback_client( NULL, 0 ) );
    GARBAGE( 1, CHECK( netcode_server_client_loopback( NULL, 0 ) == 0 ) );
    GARBAGE( 1, netcode_server_process_loopback_packet( NULL, 0, data, 10, 0 ) );
    GARBAGE( 1, CHECK( netcode_server_get_port( NULL ) == 0 ) );

    GARBAGE( 1, netcode_default_client_config( NULL ) );
    GARBAGE( 1, netcode_default_server_config( NULL ) );
}

static void creates( void )
{
    struct netcode_client_config_t client_config;
    struct netcode_server_config_t server_config;
    struct netcode_client_t * client;
    struct netcode_server_t * server;

    say( "--- create with bad arguments" );
    netcode_default_client_config( &client_config );
    server_config_for_tests( &server_config );

    GARBAGE( 1, CHECK( netcode_client_create( NULL, &client_config, 0.0 ) == NULL ) );
    GARBAGE( 0, CHECK( netcode_client_create( "not an address", &client_config, 0.0 ) == NULL ) );
    CHECK( netcode_client_create_error() == NETCODE_CLIENT_CREATE_ERROR_PARSE_ADDRESS_FAILED );
    GARBAGE( 0, CHECK( netcode_client_create_dual( "0.0.0.0", "not an address", &client_config, 0.0 ) == NULL ) );
    CHECK( netcode_client_create_error() == NETCODE_CLIENT_CREATE_ERROR_PARSE_ADDRESS2_FAILED );
    GARBAGE( 1, client = netcode_client_create( "0.0.0.0", NULL, 0.0 ) );
    if ( client )
        netcode_client_destroy( client );
    GARBAGE( 1, CHECK( netcode_client_create_dual( NULL, "0.0.0.0", &client_config, 0.0 ) == NULL ) );
    client_config.network_simulator = (struct netcode_network_simulator_t *) &client_config;
    GARBAGE( 1, client = netcode_client_create( "0.0.0.0", &client_config, 0.0 ) );
    say( "a client config with a simulator pointer: %s", client ? "created, the pointer ignored" : "refused" );
    if ( client )
        netcode_client_destroy( client );

    GARBAGE( 1, CHECK( netcode_server_create( NULL, &server_config, 0.0 ) == NULL ) );
    GARBAGE( 0, CHECK( netcode_server_create( "not an address", &server_config, 0.0 ) == NULL ) );
    CHECK( netcode_server_create_error() == NETCODE_SERVER_CREATE_ERROR_PARSE_ADDRESS_FAILED );
    GARBAGE( 0, CHECK( netcode_server_create_dual( "127.0.0.1:0", "not an address", &server_config, 0.0 ) == NULL ) );
    CHECK( netcode_server_create_error() == NETCODE_SERVER_CREATE_ERROR_PARSE_ADDRESS2_FAILED );
    GARBAGE( 1, server = netcode_server_create( "127.0.0.1:0", NULL, 0.0 ) );
    if ( server )
        netcode_server_destroy( server );
    server_config.network_simulator = (struct netcode_network_simulator_t *) &server_config;
    GARBAGE( 1, server = netcode_server_create( "127.0.0.1:0", &server_config, 0.0 ) );
    say( "a server config with a simulator pointer: %s", server ? "created, the pointer ignored" : "refused" );
    if ( server )
        netcode_server_destroy( server );
}

static void objects( void )
{
    struct pair p;
    struct netcode_server_config_t server_config;
    struct netcode_client_config_t client_config;
    struct netcode_address_t a;
    uint8_t data[NETCODE_MAX_PACKET_SIZE + 100];
    uint8_t token[NETCODE_CONNECT_TOKEN_BYTES];
    uint8_t * big;
    uint8_t * client_packet, * server_packet;
    uint8_t on_stack[64];
    int bytes = 0;
    uint64_t sequence = 0;

    say( "--- live objects, bad arguments" );
    memset( data, 3, sizeof( data ) );
    big = (uint8_t *) calloc( 100000, 1 );
    REQUIRE( big != NULL );
    REQUIRE( netcode_parse_address( "10.99.0.9:1234", &a ) == NETCODE_OK );

    server_config_for_tests( &server_config );
    server_config.callback_context = &p;
    server_config.send_loopback_packet_callback = server_sends;
    p.server = create_override_server( &server_config, ignore_send, 0.0 );
    netcode_default_client_config( &client_config );
    client_config.callback_context = &p;
    client_config.send_loopback_packet_callback = client_sends;
    p.client = create_override_client( &client_config, ignore_send, 0.0 );

    /* Server: max_clients out of range leaves it stopped. */
    GARBAGE( 1, netcode_server_start( p.server, 0 ) );
    GARBAGE( 1, netcode_server_start( p.server, -1 ) );
    GARBAGE( 1, netcode_server_start( p.server, NETCODE_MAX_CLIENTS + 1 ) );
    CHECK( netcode_server_running( p.server ) == 0 );
    netcode_server_start( p.server, 4 );
    CHECK( netcode_server_running( p.server ) == 1 );
    GARBAGE( 1, netcode_server_start( p.server, 100000 ) );
    CHECK( netcode_server_running( p.server ) == 1 && netcode_server_max_clients( p.server ) == 4 );

    /* Loopback connects with bad indices are refused. */
    GARBAGE( 0, netcode_server_connect_loopback_client( p.server, -1, 1, NULL ) );
    GARBAGE( 0, netcode_server_connect_loopback_client( p.server, 4, 1, NULL ) );
    GARBAGE( 0, netcode_server_connect_loopback_client( p.server, 100000, 1, NULL ) );
    CHECK( netcode_server_num_connected_clients( p.server ) == 0 );
    GARBAGE( 1, netcode_client_connect_loopback( p.client, -1, 4 ) );
    GARBAGE( 1, netcode_client_connect_loopback( p.client, 0, 0 ) );
    GARBAGE( 1, netcode_client_connect_loopback( p.client, 5, 4 ) );
    GARBAGE( 1, netcode_client_connect_loopback( p.client, 0, NETCODE_MAX_CLIENTS + 1 ) );
    CHECK( netcode_client_state( p.client ) == NETCODE_CLIENT_STATE_DISCONNECTED );
    CHECK( netcode_client_loopback( p.client ) == 0 );

    /* Now a good loopback pair in slot 0, so that sends are really tried. */
    netcode_server_connect_loopback_client( p.server, 0, 5, NULL );
    netcode_client_connect_loopback( p.client, 0, 4 );
    REQUIRE( netcode_client_state( p.client ) == NETCODE_CLIENT_STATE_CONNECTED );
    REQUIRE( netcode_server_client_connected( p.server, 0 ) );

    /* Out-of-range indices. */
    GARBAGE( 0, CHECK( netcode_server_client_connected( p.server, -1 ) == 0 ) );
    GARBAGE( 0, CHECK( netcode_server_client_connected( p.server, 4 ) == 0 ) );
    GARBAGE( 0, CHECK( netcode_server_client_connected( p.server, NETCODE_MAX_CLIENTS ) == 0 ) );
    GARBAGE( 0, CHECK( netcode_server_client_connected( p.server, 1 << 30 ) == 0 ) );
    GARBAGE( 0, CHECK( netcode_server_client_id( p.server, -1 ) == 0 ) );
    GARBAGE( 0, CHECK( netcode_server_client_address( p.server, -1 ) == NULL ) );
    GARBAGE( 0, CHECK( netcode_server_client_address( p.server, NETCODE_MAX_CLIENTS ) == NULL ) );
    GARBAGE( 0, CHECK( netcode_server_client_user_data( p.server, -1 ) == NULL ) );
    GARBAGE( 0, CHECK( netcode_server_client_user_data( p.server, NETCODE_MAX_CLIENTS ) == NULL ) );
    GARBAGE( 0, CHECK( netcode_server_client_disconnect_reason( p.server, -1 ) == NETCODE_SERVER_CLIENT_DISCONNECT_REASON_NONE ) );
    GARBAGE( 0, CHECK( netcode_server_client_disconnect_reason( p.server, 1 << 30 ) == NETCODE_SERVER_CLIENT_DISCONNECT_REASON_NONE ) );
    GARBAGE( 0, netcode_server_disconnect_client( p.server, -1 ) );
    GARBAGE( 0, netcode_server_disconnect_client( p.server, 100000 ) );
    GARBAGE( 0, CHECK( netcode_server_next_packet_sequence( p.server, -1 ) == 0 ) );
    GARBAGE( 0, CHECK( netcode_server_next_packet_sequence( p.server, 1 ) == 0 ) );
    GARBAGE( 0, netcode_server_send_packet( p.server, -1, data, 10 ) );
    GARBAGE( 0, netcode_server_send_packet( p.server, 1000, data, 10 ) );
    GARBAGE( 0, CHECK( netcode_server_receive_packet( p.server, -1, &bytes, &sequence ) == NULL ) );
    GARBAGE( 0, CHECK( netcode_server_receive_packet( p.server, 1 << 20, &bytes, &sequence ) == NULL ) );
    GARBAGE( 0, CHECK( netcode_server_client_loopback( p.server, -1 ) == 0 ) );
    GARBAGE( 0, CHECK( netcode_server_client_loopback( p.server, 300 ) == 0 ) );
    GARBAGE( 0, netcode_server_process_loopback_packet( p.server, -1, data, 10, 0 ) );
    GARBAGE( 0, netcode_server_process_loopback_packet( p.server, 3, data, 10, 0 ) );
    GARBAGE( 0, netcode_server_disconnect_loopback_client( p.server, -1 ) );
    GARBAGE( 0, netcode_server_disconnect_loopback_client( p.server, 77 ) );
    CHECK( netcode_server_client_connected( p.server, 0 ) == 1 );

    /* Bad pointers and sizes on live objects. */
    GARBAGE( 1, netcode_client_send_packet( p.client, NULL, 10 ) );
    GARBAGE( 1, netcode_client_send_packet( p.client, data, 0 ) );
    GARBAGE( 1, netcode_client_send_packet( p.client, data, -1 ) );
    GARBAGE( 1, netcode_client_send_packet( p.client, data, NETCODE_MAX_PACKET_SIZE + 1 ) );
    GARBAGE( 1, netcode_client_send_packet( p.client, big, 100000 ) );
    GARBAGE( 1, netcode_server_send_packet( p.server, 0, NULL, 10 ) );
    GARBAGE( 1, netcode_server_send_packet( p.server, 0, data, 0 ) );
    GARBAGE( 1, netcode_server_send_packet( p.server, 0, data, -1 ) );
    GARBAGE( 1, netcode_server_send_packet( p.server, 0, data, NETCODE_MAX_PACKET_SIZE + 1 ) );
    GARBAGE( 1, netcode_server_send_packet( p.server, 0, big, 100000 ) );
    GARBAGE( 1, netcode_client_process_loopback_packet( p.client, NULL, 10, 0 ) );
    GARBAGE( 1, netcode_client_process_loopback_packet( p.client, data, -1, 0 ) );
    GARBAGE( 1, netcode_client_process_loopback_packet( p.client, data, NETCODE_MAX_PACKET_SIZE + 1, 0 ) );
    GARBAGE( 1, netcode_server_process_loopback_packet( p.server, 0, NULL, 10, 0 ) );
    GARBAGE( 1, netcode_server_process_loopback_packet( p.server, 0, data, -1, 0 ) );
    GARBAGE( 1, netcode_server_process_loopback_packet( p.server, 0, data, NETCODE_MAX_PACKET_SIZE + 1, 0 ) );
    GARBAGE( 1, netcode_client_process_packet( p.client, NULL, data, 10 ) );
    GARBAGE( 1, netcode_client_process_packet( p.client, &a, NULL, 10 ) );
    GARBAGE( 1, netcode_client_process_packet( p.client, &a, data, -5 ) );
    GARBAGE( 1, netcode_client_process_packet( p.client, &a, big, 100000 ) );
    GARBAGE( 1, netcode_server_process_packet( p.server, NULL, data, 10 ) );
    GARBAGE( 1, netcode_server_process_packet( p.server, &a, NULL, 10 ) );
    GARBAGE( 1, netcode_server_process_packet( p.server, &a, data, -5 ) );
    GARBAGE( 1, netcode_server_process_packet( p.server, &a, big, 100000 ) );
    GARBAGE( 0, netcode_server_process_packet( p.server, &a, data, 0 ) );

    /* Nothing of the above reached the other side. */
    CHECK( netcode_server_receive_packet( p.server, 0, &bytes, &sequence ) == NULL );
    CHECK( netcode_client_receive_packet( p.client, &bytes, &sequence ) == NULL );

    /* Received packets: NULL out-pointers, double frees, the wrong owner. */
    fill_payload( data, 40, 11 );
    netcode_client_send_packet( p.client, data, 40 );
    netcode_server_send_packet( p.server, 0, data, 40 );
    client_packet = netcode_client_receive_packet( p.client, &bytes, &sequence );
    CHECK( client_packet != NULL && bytes == 40 && payload_ok( client_packet, bytes, 11 ) );
    server_packet = netcode_server_receive_packet( p.server, 0, &bytes, &sequence );
    CHECK( server_packet != NULL && bytes == 40 && payload_ok( server_packet, bytes, 11 ) );
    GARBAGE( 1, netcode_client_free_packet( p.client, server_packet ) );
    GARBAGE( 1, netcode_server_free_packet( p.server, client_packet ) );
    GARBAGE( 1, netcode_client_free_packet( p.client, on_stack ) );
    GARBAGE( 1, netcode_server_free_packet( p.server, on_stack ) );
    GARBAGE( 1, netcode_client_free_packet( p.client, (void *) 1 ) );
    GARBAGE( 0, netcode_client_free_packet( p.client, NULL ) );
    GARBAGE( 0, netcode_server_free_packet( p.server, NULL ) );
    /* Still valid after the refused frees: read them again, then free. */
    CHECK( client_packet != NULL && payload_ok( client_packet, 40, 11 ) );
    CHECK( server_packet != NULL && payload_ok( server_packet, 40, 11 ) );
    GARBAGE( 0, netcode_client_free_packet( p.client, client_packet ) );
    GARBAGE( 0, netcode_server_free_packet( p.server, server_packet ) );
    GARBAGE( 1, netcode_client_free_packet( p.client, client_packet ) );
    GARBAGE( 1, netcode_server_free_packet( p.server, server_packet ) );

    /* receive_packet with NULL out-pointers: refused or tolerated, never
       written through; whatever it hands out is freed. */
    netcode_client_send_packet( p.client, data, 40 );
    netcode_server_send_packet( p.server, 0, data, 40 );
    GARBAGE( 0, client_packet = netcode_client_receive_packet( p.client, NULL, NULL ) );
    if ( client_packet )
        netcode_client_free_packet( p.client, client_packet );
    GARBAGE( 0, server_packet = netcode_server_receive_packet( p.server, 0, NULL, &sequence ) );
    if ( server_packet )
        netcode_server_free_packet( p.server, server_packet );
    /* A refused receive may leave the packet queued: drain both queues. */
    while ( ( client_packet = netcode_client_receive_packet( p.client, &bytes, &sequence ) ) != NULL )
        netcode_client_free_packet( p.client, client_packet );
    while ( ( server_packet = netcode_server_receive_packet( p.server, 0, &bytes, &sequence ) ) != NULL )
        netcode_server_free_packet( p.server, server_packet );

    /* Tokens. */
    GARBAGE( 1, netcode_client_connect( p.client, NULL ) );
    netcode_client_disconnect_loopback( p.client );
    netcode_random_bytes( token, sizeof( token ) );
    GARBAGE( 0, netcode_client_connect( p.client, token ) );
    CHECK( netcode_client_state( p.client ) == NETCODE_CLIENT_STATE_INVALID_CONNECT_TOKEN );
    GARBAGE( 0, netcode_client_update( p.client, NAN ) );
    GARBAGE( 0, netcode_client_update( p.client, INFINITY ) );
    GARBAGE( 0, netcode_server_update( p.server, NAN ) );
    GARBAGE( 0, netcode_server_update( p.server, -INFINITY ) );
    netcode_server_update( p.server, 2.0 );

    /* The objects still work: a loopback pair again, payloads both ways. */
    netcode_client_connect_loopback( p.client, 0, 4 );
    CHECK( netcode_client_state( p.client ) == NETCODE_CLIENT_STATE_CONNECTED );
    CHECK( netcode_server_client_connected( p.server, 0 ) == 1 );
    fill_payload( data, NETCODE_MAX_PACKET_SIZE, 12 );
    netcode_client_send_packet( p.client, data, NETCODE_MAX_PACKET_SIZE );
    netcode_server_send_packet( p.server, 0, data, NETCODE_MAX_PACKET_SIZE );
    client_packet = netcode_client_receive_packet( p.client, &bytes, &sequence );
    CHECK( client_packet != NULL && payload_ok( client_packet, bytes, 12 ) );
    if ( client_packet )
        netcode_client_free_packet( p.client, client_packet );
    server_packet = netcode_server_receive_packet( p.server, 0, &bytes, &sequence );
    CHECK( server_packet != NULL && payload_ok( server_packet, bytes, 12 ) );
    if ( server_packet )
        netcode_server_free_packet( p.server, server_packet );
    say( "after all that, the loopback pair still carries payloads both ways" );

    netcode_client_destroy( p.client );
    netcode_server_destroy( p.server );
    free( big );
}

static int hook_calls = 0;

static int second_hook( const char * format, ... )
{
    (void) format;
    hook_calls++;
    return 0;
}

static void hooks( void )
{
    uint8_t data[4] = { 0, 0, 0, 0 };
    say( "--- hooks" );
    /* netcode_assert reaches the exported hook variable. */
    netcode_set_assert_function( counting_assert );
    CHECK( netcode_assert_function == counting_assert );
    netcode_assert( data[0] == 1 );
    CHECK( assert_calls == 1 );
    netcode_assert( data[0] == 0 );
    CHECK( assert_calls == 1 );

    /* Another printf hook takes the log; NULL falls back to a default. */
    netcode_set_printf_function( second_hook );
    netcode_random_bytes( NULL, 4 );
    CHECK( hook_calls >= 1 );
    GARBAGE( 0, netcode_set_printf_function( NULL ) );
    say( "with the printf hook set to NULL, a log line goes to the default sink:" );
    netcode_random_bytes( NULL, 4 );
    netcode_set_printf_function( counting_printf );
}

int main( void )
{
    start_test( "garbage", NETCODE_LOG_LEVEL_ERROR );
    netcode_set_assert_function( counting_assert );

    globals();
    null_objects();
    creates();
    objects();
    hooks();

    say( "%d garbage calls survived, %d log lines", cases, log_lines );
    netcode_term();
    return finish();
}
