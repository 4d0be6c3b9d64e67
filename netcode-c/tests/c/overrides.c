/*
    Send and receive overrides: a client and a server at addresses this
    machine does not have (10.99.0.x), their packets carried by the test's
    own in-memory queue, so that nothing is bound (checked: no socket is
    opened). The first three packets to the client are dropped (the client
    retransmits and connects anyway); payloads both ways are checked.
    Then a second pair whose receive override returns nothing, the test
    handing each datagram to netcode_server_process_packet /
    netcode_client_process_packet instead, with random garbage datagrams
    mixed in. And, as of 1.4.7, an override flag without both callbacks is
    refused at create with codes 7 (client) and 8 (server).
*/

#include "common.h"

#include <dirent.h>

#define QUEUE_SIZE 4096
#define MAX_DATAGRAM 1500

struct datagram
{
    struct netcode_address_t from, to;
    int bytes;
    uint8_t data[MAX_DATAGRAM];
};

static struct datagram queue[QUEUE_SIZE];
static int queued = 0;
static long carried = 0, dropped = 0, bad_calls = 0;
static int drop_to = 0; /* how many more packets to drop_address to drop */
static struct netcode_address_t drop_address;

struct endpoint
{
    struct netcode_address_t self;
    int receive_calls;
};

static void send_override( void * context, struct netcode_address_t * to, const uint8_t * data, int bytes )
{
    struct endpoint * e = (struct endpoint *) context;
    struct datagram * d;
    if ( e == NULL || to == NULL || data == NULL || bytes < 1 || bytes > MAX_DATAGRAM )
    {
        bad_calls++;
        return;
    }
    if ( drop_to > 0 && netcode_address_equal( to, &drop_address ) )
    {
        drop_to--;
        dropped++;
        return;
    }
    if ( queued == QUEUE_SIZE )
    {
        dropped++;
        return;
    }
    d = &queue[queued++];
    d->from = e->self;
    d->to = *to;
    d->bytes = bytes;
    memcpy( d->data, data, (size_t) bytes );
}

/* Takes the oldest datagram for `to` out of the queue into *out. */
static int take( struct netcode_address_t * to, struct datagram * out )
{
    int i;
    for ( i = 0; i < queued; i++ )
    {
        if ( netcode_address_equal( &queue[i].to, to ) )
        {
            *out = queue[i];
            memmove( &queue[i], &queue[i + 1], sizeof( struct datagram ) * (size_t) ( queued - i - 1 ) );
            queued--;
            carried++;
            return 1;
        }
    }
    return 0;
}

static int receive_override( void * context, struct netcode_address_t * from, uint8_t * data, int bytes )
{
    struct endpoint * e = (struct endpoint *) context;
    static struct datagram d;
    if ( e == NULL || from == NULL || data == NULL || bytes < NETCODE_MAX_PACKET_SIZE )
    {
        bad_calls++;
        return 0;
    }
    e->receive_calls++;
    if ( !take( &e->self, &d ) )
        return 0;
    if ( d.bytes > bytes )
    {
        bad_calls++;
        return 0;
    }
    *from = d.from;
    memcpy( data, d.data, (size_t) d.bytes );
    return d.bytes;
}

static int receive_nothing_counted( void * context, struct netcode_address_t * from, uint8_t * data, int bytes )
{
    struct endpoint * e = (struct endpoint *) context;
    (void) from; (void) data; (void) bytes;
    if ( e )
        e->receive_calls++;
    return 0;
}

/* Open sockets of this process, or -1 where /proc is not there. */
static int count_sockets( void )
{
    DIR * dir = opendir( "/proc/self/fd" );
    struct dirent * entry;
    int count = 0;
    if ( dir == NULL )
        return -1;
    while ( ( entry = readdir( dir ) ) != NULL )
    {
        char path[300], target[300];
        ssize_t n;
        if ( entry->d_name[0] == '.' )
            continue;
        snprintf( path, sizeof( path ), "/proc/self/fd/%s", entry->d_name );
        n = readlink( path, target, sizeof( target ) - 1 );
        if ( n > 0 )
        {
            target[n] = '\0';
            if ( strncmp( target, "socket:", 7 ) == 0 )
                count++;
        }
    }
    closedir( dir );
    return count;
}

static void exchange( struct netcode_server_t * server, struct netcode_client_t * client, double * t,
                      int pump, struct netcode_address_t * server_address, struct netcode_address_t * client_address );

/* The test's pump for the second pair: every queued datagram for these two
   addresses goes through process_packet. */
static void pump_queue( struct netcode_server_t * server, struct netcode_client_t * client,
                        struct netcode_address_t * server_address, struct netcode_address_t * client_address )
{
    static struct datagram d;
    while ( take( server_address, &d ) )
        netcode_server_process_packet( server, &d.from, d.data, d.bytes );
    while ( take( client_address, &d ) )
        netcode_client_process_packet( client, &d.from, d.data, d.bytes );
}

/* One frame, 50 ms on: the client, then the server, each followed by the
   test's pump when it carries the datagrams. */
static void frame( struct netcode_server_t * server, struct netcode_client_t * client, double * t, int pump,
                   struct netcode_address_t * server_address, struct netcode_address_t * client_address )
{
    *t += 0.05;
    netcode_client_update( client, *t );
    if ( pump )
        pump_queue( server, client, server_address, client_address );
    netcode_server_update( server, *t );
    if ( pump )
        pump_queue( server, client, server_address, client_address );
}

static int connect_pair( struct netcode_server_t * server, struct netcode_client_t * client, double * t, int pump,
                         struct netcode_address_t * server_address, struct netcode_address_t * client_address )
{
    int frames;
    for ( frames = 0; frames < 500; frames++ )
    {
        frame( server, client, t, pump, server_address, client_address );
        if ( netcode_client_state( client ) == NETCODE_CLIENT_STATE_CONNECTED )
            return 1;
        if ( netcode_client_state( client ) <= 0 )
            break;
    }
    say( "not connected: %s", state_name( netcode_client_state( client ) ) );
    return 0;
}

static void exchange( struct netcode_server_t * server, struct netcode_client_t * client, double * t,
                      int pump, struct netcode_address_t * server_address, struct netcode_address_t * client_address )
{
    uint8_t data[NETCODE_MAX_PACKET_SIZE];
    int i, bytes, got_server = 0, got_client = 0;
    uint64_t sequence;
    uint8_t * packet;
    for ( i = 0; i < 50; i++ )
    {
        int n = ( i * 37 ) % NETCODE_MAX_PACKET_SIZE + 1;
        fill_payload( data, n, 5 );
        netcode_client_send_packet( client, data, n );
        fill_payload( data, n, 6 );
        netcode_server_send_packet( server, 0, data, n );
        frame( server, client, t, pump, server_address, client_address );
        while ( ( packet = netcode_server_receive_packet( server, 0, &bytes, &sequence ) ) != NULL )
        {
            CHECK( bytes == ( got_server * 37 ) % NETCODE_MAX_PACKET_SIZE + 1 );
            CHECK( payload_ok( packet, bytes, 5 ) );
            got_server++;
            netcode_server_free_packet( server, packet );
        }
        while ( ( packet = netcode_client_receive_packet( client, &bytes, &sequence ) ) != NULL )
        {
            CHECK( bytes == ( got_client * 37 ) % NETCODE_MAX_PACKET_SIZE + 1 );
            CHECK( payload_ok( packet, bytes, 6 ) );
            got_client++;
            netcode_client_free_packet( client, packet );
        }
    }
    say( "payloads through the queue: %d to the server, %d to the client, checked", got_server, got_client );
    CHECK( got_server == 50 );
    CHECK( got_client == 50 );
}

static void refused_without_both_callbacks( void )
{
    struct netcode_client_config_t client_config;
    struct netcode_server_config_t server_config;
    int missing;
    for ( missing = 0; missing < 2; missing++ )
    {
        netcode_default_client_config( &client_config );
        client_config.override_send_and_receive = 1;
        client_config.send_packet_override = missing == 0 ? NULL : send_override;
        client_config.receive_packet_override = missing == 1 ? NULL : receive_override;
        CHECK( netcode_client_create( "10.99.0.2:50000", &client_config, 0.0 ) == NULL );
        CHECK( netcode_client_create_error() == NETCODE_CLIENT_CREATE_ERROR_MISSING_OVERRIDE_CALLBACK );
        CHECK( netcode_client_create_dual( "10.99.0.2:50000", "[fd00::2]:50000", &client_config, 0.0 ) == NULL );
        CHECK( netcode_client_create_error() == NETCODE_CLIENT_CREATE_ERROR_MISSING_OVERRIDE_CALLBACK );

        server_config_for_tests( &server_config );
        server_config.override_send_and_receive = 1;
        server_config.send_packet_override = missing == 0 ? NULL : send_override;
        server_config.receive_packet_override = missing == 1 ? NULL : receive_override;
        CHECK( netcode_server_create( "10.99.0.1:40000", &server_config, 0.0 ) == NULL );
        CHECK( netcode_server_create_error() == NETCODE_SERVER_CREATE_ERROR_MISSING_OVERRIDE_CALLBACK );
        CHECK( netcode_server_create_dual( "10.99.0.1:40000", "[fd00::1]:40000", &server_config, 0.0 ) == NULL );
        CHECK( netcode_server_create_error() == NETCODE_SERVER_CREATE_ERROR_MISSING_OVERRIDE_CALLBACK );
    }
    say( "override flag with a callback missing: create refused, codes %d and %d",
         NETCODE_CLIENT_CREATE_ERROR_MISSING_OVERRIDE_CALLBACK, NETCODE_SERVER_CREATE_ERROR_MISSING_OVERRIDE_CALLBACK );
}

int main( void )
{
    struct endpoint server_end, client_end, server2_end, client2_end;
    struct netcode_server_config_t server_config;
    struct netcode_client_config_t client_config;
    struct netcode_server_t * server, * server2;
    struct netcode_client_t * client, * client2;
    struct netcode_address_t * seen;
    uint8_t token[NETCODE_CONNECT_TOKEN_BYTES];
    const char * list[1];
    double t = 1.0;
    int sockets_before, sockets_after, i;

    start_test( "overrides", NETCODE_LOG_LEVEL_INFO );
    memset( &server_end, 0, sizeof( server_end ) );
    memset( &client_end, 0, sizeof( client_end ) );
    memset( &server2_end, 0, sizeof( server2_end ) );
    memset( &client2_end, 0, sizeof( client2_end ) );
    REQUIRE( netcode_parse_address( "10.99.0.1:40000", &server_end.self ) == NETCODE_OK );
    REQUIRE( netcode_parse_address( "10.99.0.2:50000", &client_end.self ) == NETCODE_OK );
    REQUIRE( netcode_parse_address( "10.99.0.3:40001", &server2_end.self ) == NETCODE_OK );
    REQUIRE( netcode_parse_address( "10.99.0.4:50001", &client2_end.self ) == NETCODE_OK );

    refused_without_both_callbacks();

    sockets_before = count_sockets();
    server_config_for_tests( &server_config );
    server_config.callback_context = &server_end;
    server_config.override_send_and_receive = 1;
    server_config.send_packet_override = send_override;
    server_config.receive_packet_override = receive_override;
    server = netcode_server_create( "10.99.0.1:40000", &server_config, t );
    REQUIRE( server != NULL );
    CHECK( netcode_server_create_error() == NETCODE_SERVER_CREATE_ERROR_NONE );
    netcode_server_start( server, 4 );

    netcode_default_client_config( &client_config );
    client_config.callback_context = &client_end;
    client_config.override_send_and_receive = 1;
    client_config.send_packet_override = send_override;
    client_config.receive_packet_override = receive_override;
    client = netcode_client_create( "10.99.0.2:50000", &client_config, t );
    REQUIRE( client != NULL );
    CHECK( netcode_client_create_error() == NETCODE_CLIENT_CREATE_ERROR_NONE );
    sockets_after = count_sockets();
    if ( sockets_before >= 0 )
    {
        say( "sockets open before creating the override pair: %d, after: %d", sockets_before, sockets_after );
        CHECK( sockets_after == sockets_before );
    }
    else
        say( "SKIPPED the socket count: no /proc/self/fd here" );

    list[0] = "10.99.0.1:40000";
    REQUIRE( make_token( 1, list, 30, 5, 4242, NULL, token ) == NETCODE_OK );
    drop_address = client_end.self;
    drop_to = 3;
    netcode_client_connect( client, token );
    REQUIRE( connect_pair( server, client, &t, 0, &server_end.self, &client_end.self ) );
    CHECK( dropped == 3 );
    CHECK( server_end.receive_calls > 0 && client_end.receive_calls > 0 );
    say( "connected through the overrides with the first 3 packets to the client dropped" );
    CHECK( netcode_server_client_connected( server, 0 ) );
    seen = netcode_server_client_address( server, 0 );
    CHECK( seen != NULL && netcode_address_equal( seen, &client_end.self ) );
    seen = netcode_client_server_address( client );
    CHECK( seen != NULL && netcode_address_equal( seen, &server_end.self ) );
    exchange( server, client, &t, 0, &server_end.self, &client_end.self );

    /* The second pair: the test hands over every datagram itself. */
    server_config.callback_context = &server2_end;
    server_config.receive_packet_override = receive_nothing_counted;
    server2 = netcode_server_create( "10.99.0.3:40001", &server_config, t );
    REQUIRE( server2 != NULL );
    netcode_server_start( server2, 1 );
    client_config.callback_context = &client2_end;
    client_config.receive_packet_override = receive_nothing_counted;
    client2 = netcode_client_create( "10.99.0.4:50001", &client_config, t );
    REQUIRE( client2 != NULL );
    list[0] = "10.99.0.3:40001";
    REQUIRE( make_token( 1, list, 30, 5, 4343, NULL, token ) == NETCODE_OK );
    netcode_client_connect( client2, token );

    /* Garbage first: random datagrams of random sizes from random senders. */
    {
        static uint8_t junk[2000];
        struct netcode_address_t from;
        int n;
        for ( i = 0; i < 2000; i++ )
        {
            int k;
            n = rng_range( 0, 1400 );
            for ( k = 0; k < n; k++ )
                junk[k] = (uint8_t) rng_next();
            if ( i % 4 == 0 && n > 0 )
                junk[0] = (uint8_t) rng_range( 0, 0x8f );
            memset( &from, 0, sizeof( from ) );
            from.type = NETCODE_ADDRESS_IPV4;
            from.data.ipv4[0] = 10;
            from.data.ipv4[1] = 99;
            from.data.ipv4[2] = 1;
            from.data.ipv4[3] = (uint8_t) rng_range( 1, 254 );
            from.port = (uint16_t) rng_range( 1, 65535 );
            netcode_server_process_packet( server2, &from, junk, n );
            netcode_client_process_packet( client2, &from, junk, n );
        }
        CHECK( netcode_server_num_connected_clients( server2 ) == 0 );
        CHECK( netcode_client_state( client2 ) == NETCODE_CLIENT_STATE_SENDING_CONNECTION_REQUEST );
        say( "2000 random datagrams through process_packet: ignored" );
    }

    REQUIRE( connect_pair( server2, client2, &t, 1, &server2_end.self, &client2_end.self ) );
    say( "second pair connected through process_packet" );
    CHECK( netcode_server_client_connected( server2, 0 ) );
    exchange( server2, client2, &t, 1, &server2_end.self, &client2_end.self );

    /* The first pair is still up: keep its frames going meanwhile. */
    netcode_client_disconnect( client );
    for ( i = 0; i < 10; i++ )
    {
        t += 0.05;
        netcode_server_update( server, t );
    }
    CHECK( netcode_server_num_connected_clients( server ) == 0 );
    CHECK( netcode_server_client_disconnect_reason( server, 0 ) == NETCODE_SERVER_CLIENT_DISCONNECT_REASON_CLIENT_DISCONNECT );
    say( "client disconnect carried through the queue" );

    netcode_client_destroy( client2 );
    netcode_server_destroy( server2 );
    netcode_client_destroy( client );
    netcode_server_destroy( server );
    CHECK( bad_calls == 0 );
    say( "%ld datagrams carried, %ld dropped, %ld bad override calls", carried, dropped, bad_calls );
    netcode_term();
    return finish();
}
