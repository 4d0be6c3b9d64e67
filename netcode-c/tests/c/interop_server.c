/*
    A server on this library for the interop runs (run.sh): listens on
    ADDRESS (default 127.0.0.1:40000; port 0 picks a free port) with the
    examples' protocol id and key, 256 slots, sends the examples' payload
    (1200 bytes, byte i is i % 256) to every connected client every frame
    at 60 Hz and checks every payload it receives. Prints "server
    listening on ADDRESS" once started, with the port it got. Stops after
    --seconds N (default 4); destroying the server sends every client
    disconnect packets. Exits 0 only if a client connected, a payload was
    sent and one received, and every payload received was right.

    usage: interop_server [ADDRESS] [--seconds N]
*/

#include "common.h"

static int connects = 0;

static void on_connect_disconnect( void * context, int client_index, int connected )
{
    struct netcode_server_t ** server = (struct netcode_server_t **) context;
    char text[256];
    if ( connected )
    {
        connects++;
        say( "client %d connected (id %016llx, %s)", client_index,
             (unsigned long long) netcode_server_client_id( *server, client_index ),
             netcode_address_to_string( netcode_server_client_address( *server, client_index ), text ) );
    }
    else
        say( "client %d disconnected (reason %d)", client_index,
             netcode_server_client_disconnect_reason( *server, client_index ) );
}

int main( int argc, char ** argv )
{
    const char * address = "127.0.0.1:40000";
    double seconds = 4.0, started, now;
    struct netcode_server_config_t config;
    struct netcode_server_t * server = NULL;
    uint8_t payload[NETCODE_MAX_PACKET_SIZE];
    long sent = 0, received = 0, bad = 0;
    int i;

    start_interop( "interop server", argc, argv, &address, &seconds );

    server_config_for_tests( &config );
    config.callback_context = &server;
    config.connect_disconnect_callback = on_connect_disconnect;
    server = netcode_server_create( address, &config, netcode_time() );
    REQUIRE( server != NULL );
    netcode_server_start( server, NETCODE_MAX_CLIENTS );
    {
        /* With port 0 in ADDRESS, the port the server was given. */
        struct netcode_address_t listening;
        char text[256];
        REQUIRE( netcode_parse_address( address, &listening ) == NETCODE_OK );
        listening.port = netcode_server_get_port( server );
        say( "server listening on %s", netcode_address_to_string( &listening, text ) );
    }
    fill_example_payload( payload );

    started = netcode_time();
    while ( ( now = netcode_time() ) - started < seconds )
    {
        netcode_server_update( server, now );
        for ( i = 0; i < NETCODE_MAX_CLIENTS; i++ )
        {
            int bytes;
            uint64_t sequence;
            uint8_t * packet;
            if ( !netcode_server_client_connected( server, i ) )
                continue;
            netcode_server_send_packet( server, i, payload, NETCODE_MAX_PACKET_SIZE );
            sent++;
            while ( ( packet = netcode_server_receive_packet( server, i, &bytes, &sequence ) ) != NULL )
            {
                if ( bytes == NETCODE_MAX_PACKET_SIZE && memcmp( packet, payload, NETCODE_MAX_PACKET_SIZE ) == 0 )
                    received++;
                else
                    bad++;
                netcode_server_free_packet( server, packet );
            }
        }
        netcode_sleep( 1.0 / 60.0 );
    }
    say( "shutting down: %d connects, sent %ld, received %ld good and %ld bad payloads", connects, sent, received, bad );
    netcode_server_destroy( server );
    netcode_term();
    CHECK( connects > 0 );
    CHECK( sent > 0 );
    CHECK( received > 0 );
    CHECK( bad == 0 );
    return finish();
}
