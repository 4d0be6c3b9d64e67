/*
    What the C tests share: checks that count failures, a printf hook that
    counts log lines, a test's start, the examples' protocol id, key and
    payload, self-checking payloads, free UDP ports, a monotonic clock and
    deadlines, and clients and servers in override mode with no network.

    Each test is one program: it prints what it checks and exits nonzero on
    any failure. run.sh builds and runs them.
*/

#ifndef NETCODE_C_TESTS_COMMON_H
#define NETCODE_C_TESTS_COMMON_H

#define _POSIX_C_SOURCE 200809L

#include "netcode.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* The protocol id and test key of the C reference's examples, which this
   repository's example programs use too. */
#define TEST_PROTOCOL_ID 0x1122334455667788ULL

static const uint8_t test_private_key[NETCODE_KEY_BYTES] = {
    0x60, 0x6a, 0xbe, 0x6e, 0xc9, 0x19, 0x10, 0xea, 0x9a, 0x65, 0x62, 0xf6, 0x6f, 0x2b, 0x30, 0xe4,
    0x43, 0x71, 0xd6, 0x2c, 0xd1, 0x99, 0x27, 0x26, 0x6b, 0x3c, 0x60, 0xf4, 0xb7, 0x15, 0xab, 0xa1,
};

static int test_failures = 0;
static const char * test_name = "test";

/* A failed check is reported and counted; the test goes on. */
#define CHECK( condition )                                                              \
    do {                                                                                \
        if ( !(condition) ) {                                                           \
            fprintf( stderr, "[%s] CHECK FAILED at %s:%d: %s\n", test_name, __FILE__,  \
                     __LINE__, #condition );                                            \
            test_failures++;                                                            \
        }                                                                               \
    } while ( 0 )

/* A failed requirement ends the test at once. */
#define REQUIRE( condition )                                                            \
    do {                                                                                \
        if ( !(condition) ) {                                                           \
            fprintf( stderr, "[%s] REQUIRE FAILED at %s:%d: %s\n", test_name, __FILE__,\
                     __LINE__, #condition );                                            \
            exit( 1 );                                                                  \
        }                                                                               \
    } while ( 0 )

static void say( const char * format, ... )
{
    va_list args;
    printf( "[%s] ", test_name );
    va_start( args, format );
    vprintf( format, args );
    va_end( args );
    printf( "\n" );
    fflush( stdout );
}

/* Ends the test: 0 if every check passed. */
static int finish( void )
{
    if ( test_failures )
    {
        printf( "[%s] FAILED: %d check(s) failed\n", test_name, test_failures );
        fflush( stdout );
        return 1;
    }
    printf( "[%s] PASSED\n", test_name );
    fflush( stdout );
    return 0;
}

/* Log lines the library printed through the hook, and the last one. */
static int log_lines = 0;
static char last_log[1024];
static int log_quiet = 0;

static int counting_printf( const char * format, ... )
{
    va_list args;
    int n;
    va_start( args, format );
    n = vsnprintf( last_log, sizeof( last_log ), format, args );
    va_end( args );
    log_lines++;
    if ( !log_quiet )
    {
        printf( "    log: %s", last_log );
        if ( n > 0 && last_log[strlen( last_log ) - 1] != '\n' )
            printf( "\n" );
        fflush( stdout );
    }
    return n;
}

/* Starts a test: its name for messages, netcode_init, the log level, and
   the library's log lines through counting_printf. */
static void start_test( const char * name, int log_level )
{
    test_name = name;
    REQUIRE( netcode_init() == NETCODE_OK );
    netcode_log_level( log_level );
    netcode_set_printf_function( counting_printf );
}

/* Starts an interop program, which logs through the library's default
   sink: its arguments ([ADDRESS] [--seconds N]) into address and seconds
   (left as they are when not given), netcode_init, INFO logging. */
static void start_interop( const char * name, int argc, char ** argv, const char ** address, double * seconds )
{
    int i;
    test_name = name;
    for ( i = 1; i < argc; i++ )
    {
        if ( strcmp( argv[i], "--seconds" ) == 0 && i + 1 < argc )
            *seconds = atof( argv[++i] );
        else
            *address = argv[i];
    }
    REQUIRE( netcode_init() == NETCODE_OK );
    netcode_log_level( NETCODE_LOG_LEVEL_INFO );
}

/* The payload the examples send (and the reference's programs check):
   NETCODE_MAX_PACKET_SIZE bytes, byte i is i % 256. */
static void fill_example_payload( uint8_t * payload )
{
    int i;
    for ( i = 0; i < NETCODE_MAX_PACKET_SIZE; i++ )
        payload[i] = (uint8_t) ( i % 256 );
}

static double wall_seconds( void )
{
    struct timespec ts;
    clock_gettime( CLOCK_MONOTONIC, &ts );
    return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void sleep_seconds( double seconds )
{
    struct timespec ts;
    ts.tv_sec = (time_t) seconds;
    ts.tv_nsec = (long) ( ( seconds - (double) ts.tv_sec ) * 1e9 );
    nanosleep( &ts, NULL );
}

/* A UDP port on the loopback address of the family that was free a moment
   ago, or 0 if the family is not available here. */
static int free_udp_port( int ipv6 )
{
    int fd = socket( ipv6 ? AF_INET6 : AF_INET, SOCK_DGRAM, 0 );
    int port = 0;
    if ( fd < 0 )
        return 0;
    if ( ipv6 )
    {
        struct sockaddr_in6 a;
        socklen_t len = sizeof( a );
        memset( &a, 0, sizeof( a ) );
        a.sin6_family = AF_INET6;
        a.sin6_addr = in6addr_loopback;
        if ( bind( fd, (struct sockaddr *) &a, sizeof( a ) ) == 0
             && getsockname( fd, (struct sockaddr *) &a, &len ) == 0 )
            port = ntohs( a.sin6_port );
    }
    else
    {
        struct sockaddr_in a;
        socklen_t len = sizeof( a );
        memset( &a, 0, sizeof( a ) );
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl( INADDR_LOOPBACK );
        if ( bind( fd, (struct sockaddr *) &a, sizeof( a ) ) == 0
             && getsockname( fd, (struct sockaddr *) &a, &len ) == 0 )
            port = ntohs( a.sin_port );
    }
    close( fd );
    return port;
}

/* "127.0.0.1:PORT" with a UDP port that was free a moment ago, into
   address (room for 32 bytes); the test ends if there is none. */
static void free_ipv4_address( char * address )
{
    int port = free_udp_port( 0 );
    REQUIRE( port != 0 );
    sprintf( address, "127.0.0.1:%d", port );
}

/* Payloads check themselves: byte i of a payload of n bytes sent on stream
   s is a function of (s, n, i), so the receiver knows what it must hold. */
static uint8_t payload_byte( int stream, int bytes, int i )
{
    return (uint8_t) ( stream * 29 + bytes * 7 + i * 13 + 1 );
}

static void fill_payload( uint8_t * data, int bytes, int stream )
{
    int i;
    for ( i = 0; i < bytes; i++ )
        data[i] = payload_byte( stream, bytes, i );
}

static int payload_ok( const uint8_t * data, int bytes, int stream )
{
    int i;
    if ( data == NULL || bytes < 1 || bytes > NETCODE_MAX_PACKET_SIZE )
        return 0;
    for ( i = 0; i < bytes; i++ )
        if ( data[i] != payload_byte( stream, bytes, i ) )
            return 0;
    return 1;
}

/* A fixed-seed generator (xorshift64*), so that a run can be repeated. */
static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;

static uint32_t rng_next( void )
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t) ( ( rng_state * 0x2545F4914F6CDD1DULL ) >> 32 );
}

/* Uniform in [lo, hi]. */
static int rng_range( int lo, int hi )
{
    return lo + (int) ( rng_next() % (uint32_t) ( hi - lo + 1 ) );
}

/* One chance in n. */
static int rng_one_in( int n )
{
    return rng_range( 1, n ) == 1;
}

/* A connect token for the given servers, with the examples' key. */
static int make_token( int count, const char ** servers, int expire_seconds, int timeout_seconds,
                       uint64_t client_id, uint8_t * user_data, uint8_t * token )
{
    return netcode_generate_connect_token( count, servers, servers, expire_seconds, timeout_seconds,
                                           client_id, TEST_PROTOCOL_ID, test_private_key, user_data,
                                           token );
}

static void server_config_for_tests( struct netcode_server_config_t * config )
{
    netcode_default_server_config( config );
    config->protocol_id = TEST_PROTOCOL_ID;
    memcpy( config->private_key, test_private_key, NETCODE_KEY_BYTES );
}

/* The type of a config's send_packet_override. */
typedef void send_override_function( void * context, struct netcode_address_t * to, const uint8_t * data,
                                     int bytes );

/* Override mode with no network: every datagram sent is dropped and none
   is ever received. */
static void ignore_send( void * c, struct netcode_address_t * a, const uint8_t * d, int n )
{
    (void) c; (void) a; (void) d; (void) n;
}

static int receive_nothing( void * c, struct netcode_address_t * a, uint8_t * d, int n )
{
    (void) c; (void) a; (void) d; (void) n;
    return 0;
}

/* A server (a client) on the config the caller filled, in override mode
   with the given send override (ignore_send: the network drops
   everything) and receive_nothing: no socket is bound, so its address
   (10.99.0.1:40000, the client's 10.99.0.2:50000) need not be one of this
   machine's. The test ends if it cannot be made. */
static struct netcode_server_t * create_override_server( struct netcode_server_config_t * config,
                                                         send_override_function * send_override, double time )
{
    struct netcode_server_t * server;
    config->override_send_and_receive = 1;
    config->send_packet_override = send_override;
    config->receive_packet_override = receive_nothing;
    server = netcode_server_create( "10.99.0.1:40000", config, time );
    REQUIRE( server != NULL );
    return server;
}

static struct netcode_client_t * create_override_client( struct netcode_client_config_t * config,
                                                         send_override_function * send_override, double time )
{
    struct netcode_client_t * client;
    config->override_send_and_receive = 1;
    config->send_packet_override = send_override;
    config->receive_packet_override = receive_nothing;
    client = netcode_client_create( "10.99.0.2:50000", config, time );
    REQUIRE( client != NULL );
    return client;
}

/* The library's state names, for messages. */
static const char * state_name( int state )
{
    switch ( state )
    {
        case NETCODE_CLIENT_STATE_CONNECT_TOKEN_EXPIRED: return "connect token expired";
        case NETCODE_CLIENT_STATE_INVALID_CONNECT_TOKEN: return "invalid connect token";
        case NETCODE_CLIENT_STATE_CONNECTION_TIMED_OUT: return "connection timed out";
        case NETCODE_CLIENT_STATE_CONNECTION_RESPONSE_TIMED_OUT: return "connection response timed out";
        case NETCODE_CLIENT_STATE_CONNECTION_REQUEST_TIMED_OUT: return "connection request timed out";
        case NETCODE_CLIENT_STATE_CONNECTION_DENIED: return "connection denied";
        case NETCODE_CLIENT_STATE_DISCONNECTED: return "disconnected";
        case NETCODE_CLIENT_STATE_SENDING_CONNECTION_REQUEST: return "sending connection request";
        case NETCODE_CLIENT_STATE_SENDING_CONNECTION_RESPONSE: return "sending connection response";
        case NETCODE_CLIENT_STATE_CONNECTED: return "connected";
        default: return "(not a state)";
    }
}

#endif
