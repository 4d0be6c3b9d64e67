/*
    A soak over real loopback UDP: 3 servers and 8 clients in one process,
    driven by a fixed seed for about 10 seconds (SOAK_SECONDS overrides).
    Idle clients connect with tokens listing every running server in a
    random order; connected clients send payloads of random sizes and
    sometimes disconnect; clients are sometimes destroyed and created
    again; servers are sometimes stopped and started again with another
    number of slots. Every payload is checked byte for byte; the servers'
    counts, slots and callbacks are checked against each other each frame.
*/

#include "common.h"

#define NUM_SERVERS 3
#define NUM_CLIENTS 8

struct server_slot
{
    struct netcode_server_t * server;
    char address[64];
    int connected;        /* from the callbacks */
    int callback_errors;
};

static struct server_slot servers[NUM_SERVERS];
static struct netcode_client_t * clients[NUM_CLIENTS];

static long connects, disconnects, to_servers, to_clients, bad_payloads, starts, stops;
static long client_creates, client_destroys, client_disconnects, tokens;

static void on_connect_disconnect( void * context, int client_index, int connected )
{
    struct server_slot * s = (struct server_slot *) context;
    if ( client_index < 0 || client_index >= NETCODE_MAX_CLIENTS )
        s->callback_errors++;
    if ( connected )
    {
        s->connected++;
        connects++;
    }
    else
    {
        s->connected--;
        disconnects++;
    }
}

static void on_state_change( void * context, int previous, int current )
{
    (void) context;
    if ( previous < NETCODE_CLIENT_STATE_CONNECT_TOKEN_EXPIRED || previous > NETCODE_CLIENT_STATE_CONNECTED
         || current < NETCODE_CLIENT_STATE_CONNECT_TOKEN_EXPIRED || current > NETCODE_CLIENT_STATE_CONNECTED )
    {
        fprintf( stderr, "[soak] bad state change %d -> %d\n", previous, current );
        test_failures++;
    }
}

static struct netcode_client_t * create_client( double t )
{
    struct netcode_client_config_t config;
    struct netcode_client_t * client;
    netcode_default_client_config( &config );
    config.state_change_callback = on_state_change;
    client = netcode_client_create( "0.0.0.0", &config, t );
    CHECK( client != NULL );
    client_creates++;
    return client;
}

static void start_server( int i )
{
    int slots = rng_range( 1, 8 );
    netcode_server_start( servers[i].server, slots );
    CHECK( netcode_server_running( servers[i].server ) );
    CHECK( netcode_server_max_clients( servers[i].server ) == slots );
    starts++;
}

int main( void )
{
    double t = 0.0, started, limit = 10.0;
    uint8_t data[NETCODE_MAX_PACKET_SIZE];
    uint8_t token[NETCODE_CONNECT_TOKEN_BYTES];
    const char * env = getenv( "SOAK_SECONDS" );
    int i, j;
    long frames = 0;

    if ( env && atof( env ) > 0 )
        limit = atof( env );
    start_test( "soak", NETCODE_LOG_LEVEL_ERROR );

    for ( i = 0; i < NUM_SERVERS; i++ )
    {
        struct netcode_server_config_t config;
        int port = free_udp_port( 0 );
        REQUIRE( port != 0 );
        sprintf( servers[i].address, "127.0.0.1:%d", port );
        server_config_for_tests( &config );
        config.callback_context = &servers[i];
        config.connect_disconnect_callback = on_connect_disconnect;
        servers[i].server = netcode_server_create( servers[i].address, &config, t );
        REQUIRE( servers[i].server != NULL );
        start_server( i );
    }
    for ( i = 0; i < NUM_CLIENTS; i++ )
        clients[i] = create_client( t );
    say( "3 servers (%s, %s, %s), 8 clients, seed fixed, %.0f s", servers[0].address, servers[1].address,
         servers[2].address, limit );

    started = wall_seconds();
    while ( wall_seconds() - started < limit )
    {
        frames++;
        t += 0.05;

        for ( i = 0; i < NUM_SERVERS; i++ )
        {
            struct netcode_server_t * server = servers[i].server;
            int count = 0;
            netcode_server_update( server, t );
            if ( !netcode_server_running( server ) )
            {
                if ( rng_one_in( 20 ) )
                    start_server( i );
                continue;
            }
            for ( j = 0; j < netcode_server_max_clients( server ); j++ )
            {
                int bytes;
                uint64_t sequence;
                uint8_t * packet;
                if ( !netcode_server_client_connected( server, j ) )
                {
                    CHECK( netcode_server_receive_packet( server, j, &bytes, &sequence ) == NULL );
                    continue;
                }
                count++;
                if ( rng_one_in( 2 ) )
                {
                    int n = rng_range( 1, NETCODE_MAX_PACKET_SIZE );
                    fill_payload( data, n, 7 );
                    netcode_server_send_packet( server, j, data, n );
                }
                while ( ( packet = netcode_server_receive_packet( server, j, &bytes, &sequence ) ) != NULL )
                {
                    if ( !payload_ok( packet, bytes, 8 ) )
                        bad_payloads++;
                    to_servers++;
                    netcode_server_free_packet( server, packet );
                }
            }
            CHECK( count == netcode_server_num_connected_clients( server ) );
            CHECK( count == servers[i].connected );
            if ( rng_one_in( 1500 ) )
            {
                netcode_server_stop( server );
                CHECK( !netcode_server_running( server ) );
                CHECK( netcode_server_num_connected_clients( server ) == 0 );
                CHECK( servers[i].connected == 0 );
                stops++;
            }
        }

        for ( i = 0; i < NUM_CLIENTS; i++ )
        {
            struct netcode_client_t * client = clients[i];
            int state, bytes;
            uint64_t sequence;
            uint8_t * packet;
            if ( client == NULL )
            {
                if ( rng_one_in( 10 ) )
                    clients[i] = create_client( t );
                continue;
            }
            netcode_client_update( client, t );
            state = netcode_client_state( client );
            while ( ( packet = netcode_client_receive_packet( client, &bytes, &sequence ) ) != NULL )
            {
                if ( !payload_ok( packet, bytes, 7 ) )
                    bad_payloads++;
                to_clients++;
                netcode_client_free_packet( client, packet );
            }
            if ( state <= NETCODE_CLIENT_STATE_DISCONNECTED )
            {
                if ( rng_one_in( 11 ) )
                {
                    /* A token for every running server, in a random order. */
                    const char * list[NUM_SERVERS];
                    int count = 0, k;
                    for ( k = 0; k < NUM_SERVERS; k++ )
                        if ( netcode_server_running( servers[k].server ) )
                            list[count++] = servers[k].address;
                    for ( k = count - 1; k > 0; k-- )
                    {
                        int r = rng_range( 0, k );
                        const char * swap = list[k];
                        list[k] = list[r];
                        list[r] = swap;
                    }
                    if ( count > 0 )
                    {
                        CHECK( make_token( count, list, 45, 5, (uint64_t) rng_next() << 16 | (uint64_t) i, NULL, token ) == NETCODE_OK );
                        netcode_client_connect( client, token );
                        tokens++;
                    }
                }
            }
            else if ( state == NETCODE_CLIENT_STATE_CONNECTED )
            {
                CHECK( netcode_client_index( client ) >= 0 && netcode_client_index( client ) < netcode_client_max_clients( client ) );
                if ( rng_one_in( 200 ) )
                {
                    netcode_client_disconnect( client );
                    CHECK( netcode_client_state( client ) == NETCODE_CLIENT_STATE_DISCONNECTED );
                    client_disconnects++;
                }
                else
                {
                    int n = rng_range( 1, NETCODE_MAX_PACKET_SIZE );
                    fill_payload( data, n, 8 );
                    netcode_client_send_packet( client, data, n );
                }
            }
            if ( rng_one_in( 2000 ) )
            {
                netcode_client_destroy( client );
                clients[i] = NULL;
                client_destroys++;
            }
        }
        sleep_seconds( 0.001 );
    }

    say( "%ld frames in %.1f s: %ld tokens, %ld connects, %ld disconnects (%ld by clients), %ld payloads to servers, "
         "%ld to clients, %ld bad; servers started %ld times, stopped %ld; clients created %ld times, destroyed %ld",
         frames, wall_seconds() - started, tokens, connects, disconnects, client_disconnects, to_servers, to_clients,
         bad_payloads, starts, stops, client_creates, client_destroys );

    for ( i = 0; i < NUM_CLIENTS; i++ )
        if ( clients[i] )
            netcode_client_destroy( clients[i] );
    for ( i = 0; i < NUM_SERVERS; i++ )
    {
        netcode_server_destroy( servers[i].server );
        CHECK( servers[i].connected == 0 );
        CHECK( servers[i].callback_errors == 0 );
    }
    netcode_term();

    CHECK( bad_payloads == 0 );
    CHECK( connects >= 10 );
    CHECK( client_disconnects >= 1 );
    CHECK( to_servers >= 1000 && to_clients >= 1000 );
    CHECK( connects - disconnects == 0 );
    return finish();
}
