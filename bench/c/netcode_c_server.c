/*
    A netcode server through the public API of netcode.h, for the
    connections-per-second case of wt-bench (`wt-bench connect udp --server
    c-reference`, src/bin/wt-bench/connect.rs), which runs the program that
    NETCODE_C_BENCH_SERVER names. Never built against the reference by this
    repository (netcode-c/tests/c/run.sh builds it against this project's
    netcode-c, and checks that it starts, answers and ends). With a
    checkout of the C reference at $NETCODE (netcode.c, netcode.h,
    sodium/):

        cc -O2 -DNDEBUG -I"$NETCODE" -I"$NETCODE/sodium" bench/c/netcode_c_server.c \
            "$NETCODE/netcode.c" "$NETCODE/sodium/sodium.c" -lm -o netcode-c-server

    Usage: netcode-c-server SLOTS PORT TICK_MS. Serves 127.0.0.1:PORT with
    SLOTS slots (at most NETCODE_MAX_CLIENTS), the bench's protocol id and
    private key, in the loop a game server runs at a fixed tick, as
    wt-bench's tick-loop servers do (src/bin/wt-bench/peer_servers.rs):
    every TICK_MS milliseconds, update, take every payload and free it;
    between ticks it waits on standard input, which is how the bench talks
    to it. Prints "READY udp=127.0.0.1:PORT url=- hash=0...0
    ws=-" once serving, answers a line "stats" with "STATS connected=N",
    and ends at the end of its input.
*/

#include "netcode.h"

#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROTOCOL_ID 0x1122334455667788ULL

static uint8_t private_key[NETCODE_KEY_BYTES] = {
    0x60, 0x6a, 0xbe, 0x6e, 0xc9, 0x19, 0x10, 0xea, 0x9a, 0x65, 0x62, 0xf6, 0x6f, 0x2b, 0x30, 0xe4,
    0x43, 0x71, 0xd6, 0x2c, 0xd1, 0x99, 0x27, 0x26, 0x6b, 0x3c, 0x60, 0xf4, 0xb7, 0x15, 0xab, 0xa1,
};

static double seconds_now( void )
{
    struct timespec now;
    clock_gettime( CLOCK_MONOTONIC, &now );
    return (double) now.tv_sec + (double) now.tv_nsec * 1e-9;
}

/* Reads what standard input holds: 0 at its end, 1 otherwise (answering
   each "stats" line). */
static int read_input( struct netcode_server_t * server )
{
    char line[64];
    ssize_t got = read( 0, line, sizeof( line ) - 1 );
    if ( got <= 0 )
        return 0;
    line[got] = '\0';
    for ( char * at = strstr( line, "stats" ); at != NULL; at = strstr( at + 5, "stats" ) )
    {
        printf( "STATS connected=%d\n", netcode_server_num_connected_clients( server ) );
        fflush( stdout );
    }
    return 1;
}

int main( int argc, char ** argv )
{
    if ( argc != 4 )
    {
        fprintf( stderr, "usage: netcode-c-server SLOTS PORT TICK_MS\n" );
        return 2;
    }
    int slots = atoi( argv[1] );
    int port = atoi( argv[2] );
    int tick_ms = atoi( argv[3] );
    if ( slots < 1 || slots > NETCODE_MAX_CLIENTS || port < 1 || port > 65535 || tick_ms < 1 )
    {
        fprintf( stderr, "netcode-c-server: SLOTS 1 to %d, PORT 1 to 65535, TICK_MS at least 1\n", NETCODE_MAX_CLIENTS );
        return 2;
    }
    if ( netcode_init() != NETCODE_OK )
    {
        fprintf( stderr, "netcode-c-server: netcode_init failed\n" );
        return 1;
    }
    netcode_log_level( NETCODE_LOG_LEVEL_NONE );

    char address[64];
    snprintf( address, sizeof( address ), "127.0.0.1:%d", port );
    struct netcode_server_config_t config;
    netcode_default_server_config( &config );
    config.protocol_id = PROTOCOL_ID;
    memcpy( config.private_key, private_key, NETCODE_KEY_BYTES );

    double started = seconds_now();
    struct netcode_server_t * server = netcode_server_create( address, &config, 0.0 );
    if ( server == NULL )
    {
        fprintf( stderr, "netcode-c-server: cannot serve %s\n", address );
        netcode_term();
        return 1;
    }
    netcode_server_start( server, slots );
    printf( "READY udp=%s url=- hash=%064d ws=-\n", address, 0 );
    fflush( stdout );

    double tick = tick_ms * 0.001;
    double next = seconds_now();
    for ( ;; )
    {
        /* Until the next tick, answering standard input as it comes. */
        double now;
        while ( ( now = seconds_now() ) < next )
        {
            struct pollfd input = { 0, POLLIN, 0 };
            int wait_ms = (int) ( ( next - now ) * 1000.0 ) + 1;
            if ( poll( &input, 1, wait_ms ) > 0 && !read_input( server ) )
                goto done;
        }
        next = next + tick < now ? now : next + tick;
        netcode_server_update( server, now - started );
        for ( int client = 0; client < slots; client++ )
        {
            int bytes;
            uint64_t sequence;
            uint8_t * packet;
            while ( ( packet = netcode_server_receive_packet( server, client, &bytes, &sequence ) ) != NULL )
                netcode_server_free_packet( server, packet );
        }
    }

done:
    netcode_server_destroy( server );
    netcode_term();
    return 0;
}
