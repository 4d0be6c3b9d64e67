/*
    The C API in the bench's counting runs: one case, N times, through the
    public API of netcode.h, each operation inside measured_once(), its
    inputs made before (bench/src/count.rs says how the runs are measured).
    The same source is built twice, and benches/counts.rs runs each build
    when its variable names it:

    * against the C reference (NETCODE_C_BENCH): not built by any script of
      this repository. With a checkout of the reference at $NETCODE
      (netcode.c, netcode.h, sodium/):

        cc -O2 -DNDEBUG -I"$NETCODE" -I"$NETCODE/sodium" bench/c/netcode_c_bench.c \
            "$NETCODE/netcode.c" "$NETCODE/sodium/sodium.c" -lm -o netcode-c-bench

    * against this project's netcode-c (NETCODE_C_API_BENCH): its header
      netcode-c/include/netcode.h and its release libnetcode.a, built by
      bench/scripts/c-api.sh (which then runs the counts with it);
      netcode-c/tests/c/run.sh also builds it against the debug library,
      so that it keeps building.

    Usage: netcode-c-bench CASE N, CASE as in src/bin/netcode-count/main.rs:
    send-100, send-1200, receive-100, receive-1200, request, garbage,
    handshake, token, tick-16, tick-256 (N counts ticks; a server of either
    library holds at most NETCODE_MAX_CLIENTS, 256), loopback-100,
    loopback-1200. Prints "ns_per_op X"; an unknown case exits 2 with "not
    offered".

    In-memory cases use the API's own hooks: send_packet_override captures
    each datagram, and netcode_server_process_packet /
    netcode_client_process_packet hand it to the other side. The addresses
    those calls take (every client's, the server's) are formatted and
    parsed once before any case runs (senders, below), so that a measured
    call is library work only.

    Tokens are issued after the server that takes them has started (the
    request and handshake cases make them for each batch, after its server
    starts; not measured): a server that applies the restart rule of the
    reference's 1.4.5, as netcode-c does, refuses a token issued before it
    started.
*/

#include "netcode.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PROTOCOL_ID 0x1122334455667788ULL
#define BATCH 256
#define MAX_DATAGRAM 1400

static uint8_t private_key[NETCODE_KEY_BYTES] = {
    0x60, 0x6a, 0xbe, 0x6e, 0xc9, 0x19, 0x10, 0xea, 0x9a, 0x65, 0x62, 0xf6, 0x6f, 0x2b, 0x30, 0xe4,
    0x43, 0x71, 0xd6, 0x2c, 0xd1, 0x99, 0x27, 0x26, 0x6b, 0x3c, 0x60, 0xf4, 0xb7, 0x15, 0xab, 0xa1,
};

static const char * server_address = "127.0.0.1:40000";

/* The last datagram one side sent, and how many it sent. */
struct capture
{
    uint8_t bytes[MAX_DATAGRAM];
    int len;
    long sent;
};

static void capture_send( void * context, struct netcode_address_t * to, const uint8_t * data, int bytes )
{
    (void) to;
    struct capture * c = (struct capture *) context;
    if ( bytes > MAX_DATAGRAM )
        bytes = MAX_DATAGRAM;
    memcpy( c->bytes, data, (size_t) bytes );
    c->len = bytes;
    c->sent++;
}

static int receive_nothing( void * context, struct netcode_address_t * from, uint8_t * data, int bytes )
{
    (void) context; (void) from; (void) data; (void) bytes;
    return 0;
}

/* The one function whose instructions are collected. */
__attribute__(( noinline )) void measured_once( void (*operation)( void *, long ), void * state, long i )
{
    operation( state, i );
}

static double seconds_now( void )
{
    struct timespec t;
    clock_gettime( CLOCK_MONOTONIC, &t );
    return (double) t.tv_sec + (double) t.tv_nsec * 1e-9;
}

/* Runs operation(state, i) for i in 0..n inside measured_once; the seconds taken. */
static double measure( void (*operation)( void *, long ), void * state, long n )
{
    double start = seconds_now();
    long i;
    for ( i = 0; i < n; i++ )
        measured_once( operation, state, i );
    return seconds_now() - start;
}

static void fill_payload( uint8_t * data, int len )
{
    int i;
    for ( i = 0; i < len; i++ )
        data[i] = (uint8_t) ( i * 7 + 3 );
}

static void make_token( uint64_t client_id, const char * address, uint8_t * token )
{
    const char * addresses[1] = { address };
    uint8_t user_data[NETCODE_USER_DATA_BYTES];
    memset( user_data, 0x17, sizeof( user_data ) );
    if ( netcode_generate_connect_token( 1, addresses, addresses, 30, 10, client_id, PROTOCOL_ID, private_key, user_data, token ) != NETCODE_OK )
    {
        fprintf( stderr, "token generation failed\n" );
        exit( 1 );
    }
}

static struct netcode_server_t * memory_server( struct capture * out, int slots )
{
    struct netcode_server_config_t config;
    netcode_default_server_config( &config );
    config.protocol_id = PROTOCOL_ID;
    memcpy( config.private_key, private_key, NETCODE_KEY_BYTES );
    config.callback_context = out;
    config.override_send_and_receive = 1;
    config.send_packet_override = capture_send;
    config.receive_packet_override = receive_nothing;
    struct netcode_server_t * server = netcode_server_create( server_address, &config, 0.0 );
    if ( !server )
    {
        fprintf( stderr, "server creation failed\n" );
        exit( 1 );
    }
    netcode_server_start( server, slots );
    return server;
}

static void client_address( long i, char * text, struct netcode_address_t * address )
{
    snprintf( text, 64, "127.%d.%d.%d:50000", (int) ( ( i >> 16 ) & 255 ), (int) ( ( i >> 8 ) & 255 ), (int) ( i & 255 ) );
    netcode_parse_address( text, address );
}

/* senders[i] is client i's address (client_address), parsed by
   parse_senders before any case runs: the measured functions take their
   senders from here, so no formatting or parsing is counted in them. Every
   case uses clients 0 to BATCH - 1 at most. */
static struct netcode_address_t senders[BATCH];

static void parse_senders( void )
{
    char text[64];
    long i;
    for ( i = 0; i < BATCH; i++ )
        client_address( i, text, &senders[i] );
}

static struct netcode_client_t * memory_client( struct capture * out, long i )
{
    struct netcode_client_config_t config;
    netcode_default_client_config( &config );
    config.callback_context = out;
    config.override_send_and_receive = 1;
    config.send_packet_override = capture_send;
    config.receive_packet_override = receive_nothing;
    char text[64];
    struct netcode_address_t address;
    client_address( i, text, &address );
    struct netcode_client_t * client = netcode_client_create( text, &config, 0.0 );
    if ( !client )
    {
        fprintf( stderr, "client creation failed\n" );
        exit( 1 );
    }
    return client;
}

/* One whole handshake of client i, in memory: token to connected. */
struct handshake_state
{
    struct netcode_server_t * server;
    struct capture * to_client;
    struct netcode_client_t ** clients;
    struct capture * to_server;
    uint8_t (*tokens)[NETCODE_CONNECT_TOKEN_BYTES];
    struct netcode_address_t server_address;
};

static void handshake_one( void * s, long i )
{
    struct handshake_state * h = (struct handshake_state *) s;
    struct netcode_client_t * client = h->clients[i];
    struct capture * up = &h->to_server[i];
    struct netcode_address_t * from = &senders[i];
    double t = 1.0; /* each client has a clock of its own */
    netcode_client_connect( client, h->tokens[i] );
    netcode_client_update( client, t );
    netcode_server_process_packet( h->server, from, up->bytes, up->len );
    netcode_client_process_packet( client, &h->server_address, h->to_client->bytes, h->to_client->len );
    netcode_client_update( client, t + 0.101 );
    netcode_server_process_packet( h->server, from, up->bytes, up->len );
    netcode_client_process_packet( client, &h->server_address, h->to_client->bytes, h->to_client->len );
}

/* Connects client 0 to server in memory; returns the client. */
static struct netcode_client_t * connected_pair( struct netcode_server_t * server, struct capture * to_client, struct capture * to_server )
{
    static uint8_t tokens[1][NETCODE_CONNECT_TOKEN_BYTES];
    struct netcode_client_t * client = memory_client( to_server, 0 );
    make_token( 1, server_address, tokens[0] );
    struct handshake_state h = { server, to_client, &client, to_server, tokens, { { { 0 } }, 0, 0 } };
    netcode_parse_address( server_address, &h.server_address );
    handshake_one( &h, 0 );
    if ( netcode_client_state( client ) != NETCODE_CLIENT_STATE_CONNECTED )
    {
        fprintf( stderr, "in-memory handshake failed (state %d)\n", netcode_client_state( client ) );
        exit( 1 );
    }
    return client;
}

struct send_state { struct netcode_client_t * client; uint8_t * data; int len; };

static void send_one( void * s, long i )
{
    (void) i;
    struct send_state * st = (struct send_state *) s;
    netcode_client_send_packet( st->client, st->data, st->len );
}

struct receive_state
{
    struct netcode_server_t * server;
    struct netcode_address_t from;
    uint8_t (*packets)[MAX_DATAGRAM];
    int * lens;
    long read;
};

static void receive_one( void * s, long i )
{
    struct receive_state * st = (struct receive_state *) s;
    netcode_server_process_packet( st->server, &st->from, st->packets[i], st->lens[i] );
    int bytes;
    uint64_t sequence;
    uint8_t * packet = netcode_server_receive_packet( st->server, 0, &bytes, &sequence );
    if ( packet )
    {
        st->read++;
        netcode_server_free_packet( st->server, packet );
    }
}

static double payload_cases( int receive, int len, long n )
{
    struct capture to_client = { { 0 }, 0, 0 }, to_server = { { 0 }, 0, 0 };
    struct netcode_server_t * server = memory_server( &to_client, 1 );
    struct netcode_client_t * client = connected_pair( server, &to_client, &to_server );
    uint8_t data[NETCODE_MAX_PACKET_SIZE];
    fill_payload( data, len );
    struct send_state send = { client, data, len };
    if ( !receive )
        return measure( send_one, &send, n );
    struct receive_state st;
    st.server = server;
    st.from = senders[0];
    st.packets = malloc( (size_t) n * MAX_DATAGRAM );
    st.lens = malloc( (size_t) n * sizeof( int ) );
    st.read = 0;
    long i;
    for ( i = 0; i < n; i++ )
    {
        send_one( &send, i );
        memcpy( st.packets[i], to_server.bytes, (size_t) to_server.len );
        st.lens[i] = to_server.len;
    }
    double elapsed = measure( receive_one, &st, n );
    if ( st.read != n )
    {
        fprintf( stderr, "read %ld of %ld payloads\n", st.read, n );
        exit( 1 );
    }
    return elapsed;
}

struct request_state
{
    struct netcode_server_t * server;
    uint8_t (*requests)[MAX_DATAGRAM];
    int * lens;
};

static void request_one( void * s, long i )
{
    struct request_state * st = (struct request_state *) s;
    netcode_server_process_packet( st->server, &senders[i], st->requests[i], st->lens[i] );
}

/* The connection requests of clients 0 to k - 1, each made by a client of
   its own with a token issued now: after the server that takes them has
   started (see the comment at the top). */
static void make_requests( long k, uint8_t (*requests)[MAX_DATAGRAM], int * lens )
{
    uint8_t token[NETCODE_CONNECT_TOKEN_BYTES];
    long i;
    for ( i = 0; i < k; i++ )
    {
        struct capture out = { { 0 }, 0, 0 };
        struct netcode_client_t * client = memory_client( &out, i );
        make_token( (uint64_t) i + 1, server_address, token );
        netcode_client_connect( client, token );
        netcode_client_update( client, 1.0 );
        memcpy( requests[i], out.bytes, (size_t) out.len );
        lens[i] = out.len;
        netcode_client_destroy( client );
    }
}

static double request_case( long n )
{
    static uint8_t requests[BATCH][MAX_DATAGRAM];
    static int lens[BATCH];
    double total = 0.0;
    long left = n;
    while ( left > 0 )
    {
        long k = left < BATCH ? left : BATCH;
        left -= k;
        struct capture challenges = { { 0 }, 0, 0 };
        struct netcode_server_t * server = memory_server( &challenges, BATCH );
        make_requests( k, requests, lens );
        struct request_state st = { server, requests, lens };
        total += measure( request_one, &st, k );
        if ( challenges.sent != k )
        {
            fprintf( stderr, "%ld challenges for %ld requests\n", challenges.sent, k );
            exit( 1 );
        }
        netcode_server_destroy( server );
    }
    return total;
}

static double handshake_case( long n )
{
    static uint8_t tokens[BATCH][NETCODE_CONNECT_TOKEN_BYTES];
    static struct capture ups[BATCH];
    long i;
    double total = 0.0;
    long left = n;
    while ( left > 0 )
    {
        long k = left < BATCH ? left : BATCH;
        left -= k;
        struct capture down = { { 0 }, 0, 0 };
        struct netcode_server_t * server = memory_server( &down, BATCH );
        struct netcode_client_t * clients[BATCH];
        for ( i = 0; i < k; i++ )
        {
            make_token( (uint64_t) i + 1, server_address, tokens[i] );
            clients[i] = memory_client( &ups[i], i );
        }
        struct handshake_state h = { server, &down, clients, ups, tokens, { { { 0 } }, 0, 0 } };
        netcode_parse_address( server_address, &h.server_address );
        total += measure( handshake_one, &h, k );
        if ( netcode_server_num_connected_clients( server ) != k )
        {
            fprintf( stderr, "%d of %ld handshakes completed\n", netcode_server_num_connected_clients( server ), k );
            exit( 1 );
        }
        for ( i = 0; i < k; i++ )
            netcode_client_destroy( clients[i] );
        netcode_server_destroy( server );
    }
    return total;
}

struct tick_state
{
    struct netcode_server_t * server;
    struct capture * ups;
    long read;
};

static void tick_receive_one( void * s, long i )
{
    struct tick_state * st = (struct tick_state *) s;
    netcode_server_process_packet( st->server, &senders[i], st->ups[i].bytes, st->ups[i].len );
    int bytes;
    uint64_t sequence;
    uint8_t * packet = netcode_server_receive_packet( st->server, (int) i, &bytes, &sequence );
    if ( packet )
    {
        st->read++;
        netcode_server_free_packet( st->server, packet );
    }
}

static void tick_update( void * s, long t )
{
    struct tick_state * st = (struct tick_state *) s;
    netcode_server_update( st->server, 1.0 + (double) t / 60.0 );
}

/* n ticks of a server with k clients connected in memory: every client
   sends one 100-byte payload (not measured), the server processes each and
   the game takes it, then the server updates. */
static double tick_case( long k, long n )
{
    static uint8_t tokens[BATCH][NETCODE_CONNECT_TOKEN_BYTES];
    static struct capture ups[BATCH];
    struct capture down = { { 0 }, 0, 0 };
    struct netcode_server_t * server = memory_server( &down, (int) k );
    struct netcode_client_t * clients[BATCH];
    long i;
    for ( i = 0; i < k; i++ )
    {
        make_token( (uint64_t) i + 1, server_address, tokens[i] );
        clients[i] = memory_client( &ups[i], i );
    }
    struct handshake_state h = { server, &down, clients, ups, tokens, { { { 0 } }, 0, 0 } };
    netcode_parse_address( server_address, &h.server_address );
    for ( i = 0; i < k; i++ )
        handshake_one( &h, i );
    if ( netcode_server_num_connected_clients( server ) != k )
    {
        fprintf( stderr, "%d of %ld clients connected\n", netcode_server_num_connected_clients( server ), k );
        exit( 1 );
    }
    uint8_t data[100];
    fill_payload( data, 100 );
    struct tick_state st = { server, ups, 0 };
    double total = 0.0;
    long tick;
    for ( tick = 0; tick < n; tick++ )
    {
        for ( i = 0; i < k; i++ )
            netcode_client_send_packet( clients[i], data, 100 );
        double start = seconds_now();
        for ( i = 0; i < k; i++ )
            measured_once( tick_receive_one, &st, i );
        measured_once( tick_update, &st, tick + 1 );
        total += seconds_now() - start;
    }
    if ( st.read != k * n )
    {
        fprintf( stderr, "read %ld of %ld payloads\n", st.read, k * n );
        exit( 1 );
    }
    return total;
}

struct garbage_state { struct netcode_server_t * server; uint8_t (*datagrams)[1078]; };

static void garbage_one( void * s, long i )
{
    struct garbage_state * st = (struct garbage_state *) s;
    netcode_server_process_packet( st->server, &senders[1], st->datagrams[i], 1078 );
}

static double garbage_case( long n )
{
    struct capture out = { { 0 }, 0, 0 };
    struct netcode_server_t * server = memory_server( &out, BATCH );
    struct garbage_state st = { server, malloc( (size_t) n * 1078 ) };
    uint8_t garbage[1078];
    netcode_random_bytes( garbage, sizeof( garbage ) );
    garbage[0] = 0;
    long i;
    for ( i = 0; i < n; i++ )
        memcpy( st.datagrams[i], garbage, sizeof( garbage ) );
    double elapsed = measure( garbage_one, &st, n );
    if ( out.sent != 0 )
    {
        fprintf( stderr, "garbage answered\n" );
        exit( 1 );
    }
    return elapsed;
}

static void token_one( void * s, long i )
{
    (void) i;
    make_token( 42, server_address, (uint8_t *) s );
}

struct loopback_state { struct netcode_client_t * client; struct netcode_server_t * server; uint8_t * data; int len; double t; long read; };

static void loopback_one( void * s, long i )
{
    (void) i;
    struct loopback_state * st = (struct loopback_state *) s;
    netcode_client_send_packet( st->client, st->data, st->len );
    netcode_server_update( st->server, st->t );
    int bytes;
    uint64_t sequence;
    uint8_t * packet = netcode_server_receive_packet( st->server, 0, &bytes, &sequence );
    if ( packet )
    {
        st->read++;
        netcode_server_free_packet( st->server, packet );
    }
}

static double loopback_case( int len, long n )
{
    struct netcode_server_config_t server_config;
    netcode_default_server_config( &server_config );
    server_config.protocol_id = PROTOCOL_ID;
    memcpy( server_config.private_key, private_key, NETCODE_KEY_BYTES );
    /* A server created on port 0 keeps port 0 as the address tokens must
       list, so the first free port from 42000 is taken instead. */
    char address[64];
    struct netcode_server_t * server = NULL;
    int port;
    for ( port = 42000; port < 42100 && !server; port++ )
    {
        snprintf( address, sizeof( address ), "127.0.0.1:%d", port );
        server = netcode_server_create( address, &server_config, 0.0 );
    }
    if ( !server )
    {
        fprintf( stderr, "cannot bind the server\n" );
        exit( 1 );
    }
    netcode_server_start( server, 1 );
    struct netcode_client_config_t client_config;
    netcode_default_client_config( &client_config );
    struct netcode_client_t * client = netcode_client_create( "127.0.0.1:0", &client_config, 0.0 );
    if ( !client )
    {
        fprintf( stderr, "cannot bind the client\n" );
        exit( 1 );
    }
    uint8_t token[NETCODE_CONNECT_TOKEN_BYTES];
    make_token( 1, address, token );
    netcode_client_connect( client, token );
    double epoch = seconds_now();
    while ( netcode_client_state( client ) != NETCODE_CLIENT_STATE_CONNECTED )
    {
        double t = seconds_now() - epoch;
        if ( t > 10.0 || netcode_client_state( client ) < 0 )
        {
            fprintf( stderr, "no connection over loopback (state %d)\n", netcode_client_state( client ) );
            exit( 1 );
        }
        netcode_client_update( client, t );
        netcode_server_update( server, t );
        netcode_sleep( 0.001 );
    }
    uint8_t data[NETCODE_MAX_PACKET_SIZE];
    fill_payload( data, len );
    struct loopback_state st = { client, server, data, len, seconds_now() - epoch, 0 };
    double elapsed = measure( loopback_one, &st, n );
    if ( st.read != n )
    {
        fprintf( stderr, "read %ld of %ld payloads over loopback\n", st.read, n );
        exit( 1 );
    }
    return elapsed;
}

int main( int argc, char ** argv )
{
    if ( argc != 3 )
    {
        fprintf( stderr, "usage: netcode-c-bench CASE N\n" );
        return 1;
    }
    const char * c = argv[1];
    long n = atol( argv[2] );
    if ( n <= 0 )
    {
        fprintf( stderr, "N must be a positive whole number\n" );
        return 1;
    }
    if ( netcode_init() != NETCODE_OK )
    {
        fprintf( stderr, "netcode_init failed\n" );
        return 1;
    }
    netcode_log_level( getenv( "NETCODE_C_BENCH_LOG" ) ? NETCODE_LOG_LEVEL_DEBUG : NETCODE_LOG_LEVEL_NONE );
    parse_senders();
    double elapsed;
    if ( strcmp( c, "send-100" ) == 0 ) elapsed = payload_cases( 0, 100, n );
    else if ( strcmp( c, "send-1200" ) == 0 ) elapsed = payload_cases( 0, 1200, n );
    else if ( strcmp( c, "receive-100" ) == 0 ) elapsed = payload_cases( 1, 100, n );
    else if ( strcmp( c, "receive-1200" ) == 0 ) elapsed = payload_cases( 1, 1200, n );
    else if ( strcmp( c, "request" ) == 0 ) elapsed = request_case( n );
    else if ( strcmp( c, "garbage" ) == 0 ) elapsed = garbage_case( n );
    else if ( strcmp( c, "handshake" ) == 0 ) elapsed = handshake_case( n );
    else if ( strcmp( c, "token" ) == 0 )
    {
        static uint8_t token[NETCODE_CONNECT_TOKEN_BYTES];
        elapsed = measure( token_one, token, n );
    }
    else if ( strcmp( c, "tick-16" ) == 0 ) elapsed = tick_case( 16, n );
    else if ( strcmp( c, "tick-256" ) == 0 ) elapsed = tick_case( 256, n );
    else if ( strcmp( c, "loopback-100" ) == 0 ) elapsed = loopback_case( 100, n );
    else if ( strcmp( c, "loopback-1200" ) == 0 ) elapsed = loopback_case( 1200, n );
    else
    {
        fprintf( stderr, "not offered\n" );
        return 2;
    }
    printf( "ns_per_op %.1f\n", elapsed * 1e9 / (double) n );
    netcode_term();
    return 0;
}
