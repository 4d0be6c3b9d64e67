/*
    The global functions as the C library's header documents them: init and
    term, the log level and printf hook, random bytes, time and sleep,
    address parsing, formatting and comparison (the C library's syntax and
    quirks), connect token generation, default configs, create error codes
    (bad addresses, ports in use), packet tagging, and the server's runtime
    guards on max_clients and slot indices.
*/

#include "common.h"

static void addresses( void )
{
    struct netcode_address_t a, b;
    char text[256];
    int i;
    static const char * bad[] = { "", "[", "[]", "[]:", ":", "1", "12", "123", "1234", "1.2.3", "1.2.3.4.5",
                                  "256.0.0.1", "127.1", "1.2.3.4:65536", "1.2.3.4:99999", "1.2.3.4:",
                                  "1.2.3.4:40k", "[::1]:65536", "[::1]:", "::1%eth0", "hostname", "...." };

    say( "--- addresses" );
    for ( i = 0; i < (int) ( sizeof( bad ) / sizeof( bad[0] ) ); i++ )
    {
        int ok = netcode_parse_address( bad[i], &a ) == NETCODE_ERROR;
        if ( !ok )
            say( "parsed what it must refuse: \"%s\"", bad[i] );
        CHECK( ok );
    }
    say( "%d malformed addresses refused", (int) ( sizeof( bad ) / sizeof( bad[0] ) ) );

    CHECK( netcode_parse_address( "107.77.207.77", &a ) == NETCODE_OK );
    CHECK( a.type == NETCODE_ADDRESS_IPV4 && a.port == 0 );
    CHECK( a.data.ipv4[0] == 107 && a.data.ipv4[1] == 77 && a.data.ipv4[2] == 207 && a.data.ipv4[3] == 77 );
    CHECK( netcode_parse_address( "127.0.0.1:40000", &a ) == NETCODE_OK );
    CHECK( a.type == NETCODE_ADDRESS_IPV4 && a.port == 40000 );
    CHECK( strcmp( netcode_address_to_string( &a, text ), "127.0.0.1:40000" ) == 0 );
    CHECK( netcode_parse_address( "1.2.3.4:65535", &a ) == NETCODE_OK && a.port == 65535 );
    CHECK( netcode_parse_address( "1.2.3.4:00080", &a ) == NETCODE_OK && a.port == 80 );

    CHECK( netcode_parse_address( "::1", &a ) == NETCODE_OK );
    CHECK( a.type == NETCODE_ADDRESS_IPV6 && a.port == 0 && a.data.ipv6[7] == 1 && a.data.ipv6[0] == 0 );
    CHECK( netcode_parse_address( "[fe80::202:b3ff:fe1e:8329]:40000", &a ) == NETCODE_OK );
    CHECK( a.type == NETCODE_ADDRESS_IPV6 && a.port == 40000 );
    CHECK( a.data.ipv6[0] == 0xfe80 && a.data.ipv6[4] == 0x0202 && a.data.ipv6[5] == 0xb3ff
           && a.data.ipv6[6] == 0xfe1e && a.data.ipv6[7] == 0x8329 );
    CHECK( strcmp( netcode_address_to_string( &a, text ), "[fe80::202:b3ff:fe1e:8329]:40000" ) == 0 );
    CHECK( netcode_parse_address( "[::1]", &a ) == NETCODE_OK && a.type == NETCODE_ADDRESS_IPV6 && a.port == 0 );
    CHECK( strcmp( netcode_address_to_string( &a, text ), "::1" ) == 0 );
    /* The C library's quirks: a bracketed IPv4 address, and an unbracketed
       IPv6 address whose last group looks like a port. */
    CHECK( netcode_parse_address( "[1.2.3.4]:5", &a ) == NETCODE_OK && a.type == NETCODE_ADDRESS_IPV4 && a.port == 5 );
    CHECK( netcode_parse_address( "::1:4000", &a ) == NETCODE_OK && a.type == NETCODE_ADDRESS_IPV6 && a.port == 0 );

    CHECK( netcode_parse_address( "127.0.0.1:40000", &a ) == NETCODE_OK );
    CHECK( netcode_parse_address( "127.0.0.1:40000", &b ) == NETCODE_OK );
    CHECK( netcode_address_equal( &a, &b ) == 1 );
    b.port = 40001;
    CHECK( netcode_address_equal( &a, &b ) == 0 );
    CHECK( netcode_parse_address( "[::ffff:127.0.0.1]:40000", &b ) == NETCODE_OK );
    CHECK( netcode_address_equal( &a, &b ) == 0 );
    memset( &a, 0, sizeof( a ) );
    memset( &b, 0, sizeof( b ) );
    CHECK( netcode_address_equal( &a, &b ) == 0 );
    CHECK( strcmp( netcode_address_to_string( &a, text ), "NONE" ) == 0 );
    say( "parse, format and equal as the C library" );
}

static void tokens( void )
{
    uint8_t token[NETCODE_CONNECT_TOKEN_BYTES];
    uint8_t user_data[NETCODE_USER_DATA_BYTES];
    const char * servers[NETCODE_MAX_SERVERS_PER_CONNECT + 1];
    const char * internal[1];
    char names[NETCODE_MAX_SERVERS_PER_CONNECT + 1][32];
    int i;

    say( "--- connect tokens" );
    for ( i = 0; i <= NETCODE_MAX_SERVERS_PER_CONNECT; i++ )
    {
        sprintf( names[i], "10.0.0.%d:%d", i + 1, 40000 + i );
        servers[i] = names[i];
    }
    memset( user_data, 0x42, sizeof( user_data ) );
    memset( token, 0xee, sizeof( token ) );
    CHECK( make_token( 1, servers, 30, 5, 1, user_data, token ) == NETCODE_OK );
    CHECK( memcmp( token, "NETCODE 1.02", 13 ) == 0 );
    CHECK( make_token( NETCODE_MAX_SERVERS_PER_CONNECT, servers, 30, 5, 1, NULL, token ) == NETCODE_OK );
    CHECK( make_token( NETCODE_MAX_SERVERS_PER_CONNECT + 1, servers, 30, 5, 1, NULL, token ) == NETCODE_ERROR );
    CHECK( make_token( 0, servers, 30, 5, 1, NULL, token ) == NETCODE_ERROR );
    internal[0] = "[::1]:40000";
    CHECK( netcode_generate_connect_token( 1, servers, internal, -1, -1, 2, TEST_PROTOCOL_ID, test_private_key,
                                           NULL, token ) == NETCODE_OK );
    say( "tokens for 1 and 32 servers made, 0 and 33 refused, public and internal lists" );
}

static void create_errors( void )
{
    struct netcode_client_config_t client_config;
    struct netcode_server_config_t server_config;
    struct netcode_server_t * server, * second;
    struct netcode_client_t * client;
    char address[64];
    int port = free_udp_port( 0 ), port6 = free_udp_port( 1 );

    say( "--- create and its error codes" );
    netcode_default_client_config( &client_config );
    server_config_for_tests( &server_config );
    CHECK( client_config.allocate_function != NULL && client_config.free_function != NULL );
    CHECK( client_config.override_send_and_receive == 0 && client_config.network_simulator == NULL );
    CHECK( server_config.max_connect_token_lifetime == NETCODE_DEFAULT_MAX_CONNECT_TOKEN_LIFETIME );
    CHECK( server_config.allocate_function != NULL && server_config.free_function != NULL );

    CHECK( netcode_client_create( "bogus", &client_config, 0.0 ) == NULL );
    CHECK( netcode_client_create_error() == NETCODE_CLIENT_CREATE_ERROR_PARSE_ADDRESS_FAILED );
    CHECK( netcode_client_create_dual( "0.0.0.0", "bogus", &client_config, 0.0 ) == NULL );
    CHECK( netcode_client_create_error() == NETCODE_CLIENT_CREATE_ERROR_PARSE_ADDRESS2_FAILED );
    CHECK( netcode_server_create( "bogus", &server_config, 0.0 ) == NULL );
    CHECK( netcode_server_create_error() == NETCODE_SERVER_CREATE_ERROR_PARSE_ADDRESS_FAILED );
    CHECK( netcode_server_create_dual( "127.0.0.1:40000", "bogus", &server_config, 0.0 ) == NULL );
    CHECK( netcode_server_create_error() == NETCODE_SERVER_CREATE_ERROR_PARSE_ADDRESS2_FAILED );

    /* A port in use: the server's bind error, the client's socket error. */
    REQUIRE( port != 0 );
    sprintf( address, "127.0.0.1:%d", port );
    server = netcode_server_create( address, &server_config, 0.0 );
    REQUIRE( server != NULL );
    CHECK( netcode_server_create_error() == NETCODE_SERVER_CREATE_ERROR_NONE );
    CHECK( netcode_server_get_port( server ) == port );
    second = netcode_server_create( address, &server_config, 0.0 );
    CHECK( second == NULL );
    CHECK( netcode_server_create_error() == NETCODE_SERVER_CREATE_ERROR_BIND_SOCKET_IPV4_FAILED );
    sprintf( address, "0.0.0.0:%d", port );
    client = netcode_client_create( address, &client_config, 0.0 );
    CHECK( client == NULL );
    CHECK( netcode_client_create_error() == NETCODE_CLIENT_CREATE_ERROR_CREATE_SOCKET_IPV4_FAILED );
    netcode_server_destroy( server );
    if ( port6 )
    {
        sprintf( address, "[::1]:%d", port6 );
        server = netcode_server_create( address, &server_config, 0.0 );
        REQUIRE( server != NULL );
        CHECK( netcode_server_create( address, &server_config, 0.0 ) == NULL );
        CHECK( netcode_server_create_error() == NETCODE_SERVER_CREATE_ERROR_BIND_SOCKET_IPV6_FAILED );
        sprintf( address, "[::]:%d", port6 );
        CHECK( netcode_client_create( address, &client_config, 0.0 ) == NULL );
        CHECK( netcode_client_create_error() == NETCODE_CLIENT_CREATE_ERROR_CREATE_SOCKET_IPV6_FAILED );
        netcode_server_destroy( server );
        say( "ports in use: BIND_SOCKET_IPV4/IPV6_FAILED (server), CREATE_SOCKET_IPV4/IPV6_FAILED (client)" );
    }
    else
        say( "ports in use: IPv4 checked; SKIPPED IPv6 (no ::1 here)" );

    /* Dual stack, when the machine has IPv6. */
    if ( port6 )
    {
        char address2[64];
        sprintf( address, "127.0.0.1:%d", port6 );
        sprintf( address2, "[::1]:%d", port6 );
        server = netcode_server_create_dual( address, address2, &server_config, 0.0 );
        CHECK( server != NULL );
        client = netcode_client_create_dual( "0.0.0.0", "[::]", &client_config, 0.0 );
        CHECK( client != NULL );
        if ( client )
            netcode_client_destroy( client );
        if ( server )
            netcode_server_destroy( server );
        say( "dual-stack client and server created" );
    }

    /* Packet tagging: creates still succeed after it is enabled. */
    netcode_enable_packet_tagging();
    server = netcode_server_create( "127.0.0.1:0", &server_config, 0.0 );
    CHECK( server != NULL );
    client = netcode_client_create( "0.0.0.0", &client_config, 0.0 );
    CHECK( client != NULL );
    if ( client )
        netcode_client_destroy( client );
    if ( server )
        netcode_server_destroy( server );
    say( "packet tagging enabled: client and server created" );
}

static void runtime_guards( void )
{
    struct netcode_server_config_t config;
    struct netcode_server_t * server;
    int bytes;
    uint64_t sequence;
    uint8_t data[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

    say( "--- runtime guards" );
    server_config_for_tests( &config );
    server = netcode_server_create( "127.0.0.1:0", &config, 0.0 );
    REQUIRE( server != NULL );
    /* Stopped: every slot query answers as empty. */
    CHECK( netcode_server_running( server ) == 0 && netcode_server_max_clients( server ) == 0 );
    CHECK( netcode_server_client_connected( server, 0 ) == 0 );
    CHECK( netcode_server_client_id( server, 0 ) == 0 );
    CHECK( netcode_server_next_packet_sequence( server, 0 ) == 0 );
    CHECK( netcode_server_receive_packet( server, 0, &bytes, &sequence ) == NULL );
    CHECK( netcode_server_client_disconnect_reason( server, 0 ) == NETCODE_SERVER_CLIENT_DISCONNECT_REASON_NONE );
    netcode_server_send_packet( server, 0, data, 8 );
    netcode_server_disconnect_client( server, 0 );
    netcode_server_disconnect_all_clients( server );

    netcode_server_start( server, 0 );
    CHECK( netcode_server_running( server ) == 0 );
    netcode_server_start( server, NETCODE_MAX_CLIENTS + 1 );
    CHECK( netcode_server_running( server ) == 0 );
    netcode_server_start( server, 1 );
    CHECK( netcode_server_running( server ) == 1 && netcode_server_max_clients( server ) == 1 );
    netcode_server_start( server, -1 );
    CHECK( netcode_server_running( server ) == 1 && netcode_server_max_clients( server ) == 1 );
    CHECK( netcode_server_client_connected( server, 1 ) == 0 );
    CHECK( netcode_server_client_connected( server, -1 ) == 0 );
    CHECK( netcode_server_client_address( server, 1 ) == NULL || netcode_server_client_address( server, 1 )->type == NETCODE_ADDRESS_NONE );
    CHECK( netcode_server_client_user_data( server, NETCODE_MAX_CLIENTS ) == NULL );
    CHECK( netcode_server_num_connected_clients( server ) == 0 );
    netcode_server_start( server, NETCODE_MAX_CLIENTS );
    CHECK( netcode_server_max_clients( server ) == NETCODE_MAX_CLIENTS );
    netcode_server_stop( server );
    CHECK( netcode_server_running( server ) == 0 );
    netcode_server_destroy( server );
    say( "start refuses 0, -1 and 257 slots and keeps a running server; slot queries are guarded" );
}

int main( void )
{
    uint8_t a[64], b[64];
    double t0, t1;

    test_name = "api";
    CHECK( netcode_init() == NETCODE_OK );
    CHECK( netcode_init() == NETCODE_OK );
    netcode_term();
    netcode_log_level( NETCODE_LOG_LEVEL_NONE );
    netcode_set_printf_function( counting_printf );

    /* Log level: nothing at NONE, error lines at ERROR. */
    log_lines = 0;
    CHECK( netcode_parse_address( NULL, NULL ) == NETCODE_ERROR );
    CHECK( log_lines == 0 );
    netcode_log_level( NETCODE_LOG_LEVEL_ERROR );
    CHECK( netcode_parse_address( NULL, NULL ) == NETCODE_ERROR );
    CHECK( log_lines >= 1 );
    say( "log level NONE prints nothing, ERROR prints errors through the hook" );
    netcode_log_level( NETCODE_LOG_LEVEL_INFO );

    memset( a, 0, sizeof( a ) );
    memset( b, 0, sizeof( b ) );
    netcode_random_bytes( a, sizeof( a ) );
    netcode_random_bytes( b, sizeof( b ) );
    CHECK( memcmp( a, b, sizeof( a ) ) != 0 );
    say( "random bytes differ between calls" );

    t0 = netcode_time();
    netcode_sleep( 0.05 );
    t1 = netcode_time();
    CHECK( t1 - t0 >= 0.045 && t1 - t0 < 2.0 );
    say( "netcode_sleep(0.05) took %.3f s of netcode_time", t1 - t0 );

    addresses();
    tokens();
    create_errors();
    runtime_guards();

    netcode_term();
    return finish();
}
