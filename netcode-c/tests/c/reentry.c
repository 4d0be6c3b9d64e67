/*
    Callbacks that call back in, and objects of the wrong kind:

    * a client's state change callback and a server's connect/disconnect
      callback call their own object (as the C library allows), and
      destroy it: the call that ran the callback returns without touching
      the object again, and every allocation is given back;
    * a send override that calls its own client or server while the library
      is inside it: refused with an error line, no deadlock, no crash;
    * loopback callbacks that destroy the other side;
    * a server passed to client functions and a client to server
      functions: refused with an error line;
    * a server destroyed twice: the second is an error line;
    * a client destroyed twice, and a client and a server called after
      their destroy: error lines, and no read of the freed memory (which
      AddressSanitizer would report).
*/

#include "common.h"

struct counted
{
    long allocations, frees;
};

static void * counted_allocate( void * context, size_t bytes )
{
    struct counted * c = (struct counted *) context;
    c->allocations++;
    return malloc( bytes );
}

static void counted_free( void * context, void * pointer )
{
    struct counted * c = (struct counted *) context;
    if ( pointer )
        c->frees++;
    free( pointer );
}

/* A client or a server config whose allocations are counted in memory
   (zeroed first). */
#define COUNT_ALLOCATIONS( config, memory )              \
    do {                                                 \
        memset( &(memory), 0, sizeof( memory ) );        \
        (config).allocator_context = &(memory);          \
        (config).allocate_function = counted_allocate;   \
        (config).free_function = counted_free;           \
    } while ( 0 )

/* --- a client destroyed by its own state change callback */

struct client_context
{
    struct netcode_client_t * client;
    int changes;
    int destroy_on; /* the state whose arrival destroys the client */
    int destroyed;
    int queried;
};

static void client_state_changed( void * context, int previous, int current )
{
    struct client_context * c = (struct client_context *) context;
    (void) previous;
    c->changes++;
    /* Calling the client from its callback is allowed. */
    c->queried = netcode_client_state( c->client );
    if ( current == c->destroy_on && !c->destroyed )
    {
        c->destroyed = 1;
        netcode_client_destroy( c->client );
    }
}

static void client_destroyed_in_callback( void )
{
    struct client_context context;
    struct counted memory;
    struct netcode_client_config_t config;
    const char * servers[1];
    uint8_t token[NETCODE_CONNECT_TOKEN_BYTES];

    say( "--- a client destroyed by its own state change callback" );
    memset( &context, 0, sizeof( context ) );
    netcode_default_client_config( &config );
    COUNT_ALLOCATIONS( config, memory );
    config.callback_context = &context;
    config.state_change_callback = client_state_changed;
    context.client = create_override_client( &config, ignore_send, 0.0 );
    servers[0] = "10.99.0.1:40000";
    REQUIRE( make_token( 1, servers, 30, 5, 1, NULL, token ) == NETCODE_OK );
    context.destroy_on = NETCODE_CLIENT_STATE_SENDING_CONNECTION_REQUEST;
    netcode_client_connect( context.client, token );
    CHECK( context.destroyed == 1 );
    /* The connect's change, and the destroy's own (to disconnected). */
    CHECK( context.changes >= 1 );
    say( "destroyed inside connect's callback: %ld allocations, %ld frees", memory.allocations, memory.frees );
    CHECK( memory.allocations == memory.frees );
}

/* --- a server destroyed by its own connect/disconnect callback */

struct server_context
{
    struct netcode_server_t * server;
    int connects, disconnects;
    int destroy_on_connect;
    int destroyed;
    uint64_t id_seen;
};

static void server_connect_disconnect( void * context, int client_index, int connected )
{
    struct server_context * s = (struct server_context *) context;
    if ( connected )
        s->connects++;
    else
        s->disconnects++;
    /* Calling the server from its callback is allowed. */
    s->id_seen = netcode_server_client_id( s->server, client_index );
    if ( connected && s->destroy_on_connect && !s->destroyed )
    {
        s->destroyed = 1;
        netcode_server_destroy( s->server );
    }
}

static void server_loopback_send( void * context, int client_index, const uint8_t * data, int bytes, uint64_t sequence )
{
    (void) context; (void) client_index; (void) data; (void) bytes; (void) sequence;
}

static void server_destroyed_in_callback( void )
{
    struct server_context context;
    struct counted memory;
    struct netcode_server_config_t config;

    say( "--- a server destroyed by its own connect callback" );
    memset( &context, 0, sizeof( context ) );
    server_config_for_tests( &config );
    COUNT_ALLOCATIONS( config, memory );
    config.callback_context = &context;
    config.connect_disconnect_callback = server_connect_disconnect;
    config.send_loopback_packet_callback = server_loopback_send;
    context.server = create_override_server( &config, ignore_send, 0.0 );
    netcode_server_start( context.server, 2 );
    context.destroy_on_connect = 1;
    netcode_server_connect_loopback_client( context.server, 0, 77, NULL );
    CHECK( context.destroyed == 1 );
    CHECK( context.connects == 1 );
    CHECK( context.id_seen == 77 || context.disconnects > 0 );
    say( "destroyed inside the connect callback (%d disconnect callbacks after): %ld allocations, %ld frees",
         context.disconnects, memory.allocations, memory.frees );
    CHECK( memory.allocations == memory.frees );
}

/* --- overrides that call their own object */

struct override_context
{
    struct netcode_client_t * client;
    struct netcode_server_t * server;
    int sends;
    int inner_state;
};

static void client_send_calls_in( void * context, struct netcode_address_t * to, const uint8_t * data, int bytes )
{
    struct override_context * o = (struct override_context *) context;
    (void) to; (void) data; (void) bytes;
    o->sends++;
    o->inner_state = netcode_client_state( o->client );
    netcode_client_update( o->client, 100.0 );
}

static void server_send_calls_in( void * context, struct netcode_address_t * to, const uint8_t * data, int bytes )
{
    struct override_context * o = (struct override_context *) context;
    (void) to; (void) data; (void) bytes;
    o->sends++;
    netcode_server_update( o->server, 100.0 );
    netcode_server_disconnect_all_clients( o->server );
}

static void overrides_call_in( void )
{
    struct override_context context;
    struct netcode_client_config_t client_config;
    struct netcode_server_config_t server_config;
    struct netcode_address_t from;
    const char * servers[1];
    uint8_t token[NETCODE_CONNECT_TOKEN_BYTES];
    uint8_t request[1078];
    int before, i;

    say( "--- send overrides that call their own object" );
    memset( &context, 0, sizeof( context ) );
    netcode_default_client_config( &client_config );
    client_config.callback_context = &context;
    context.client = create_override_client( &client_config, client_send_calls_in, 0.0 );
    servers[0] = "10.99.0.1:40000";
    REQUIRE( make_token( 1, servers, 30, 5, 1, NULL, token ) == NETCODE_OK );
    netcode_client_connect( context.client, token );
    before = log_lines;
    for ( i = 1; i <= 5 && context.sends == 0; i++ )
        netcode_client_update( context.client, i * 0.2 );
    CHECK( context.sends >= 1 );
    CHECK( log_lines > before );
    say( "client: %d sends, the calls from inside refused with %d log line(s)", context.sends, log_lines - before );
    CHECK( netcode_client_state( context.client ) == NETCODE_CLIENT_STATE_SENDING_CONNECTION_REQUEST );
    netcode_client_destroy( context.client );

    server_config_for_tests( &server_config );
    server_config.callback_context = &context;
    context.server = create_override_server( &server_config, server_send_calls_in, 0.0 );
    netcode_server_start( context.server, 2 );
    /* A connection request, made from a token issued after the start,
       makes the server send a challenge: prefix 0, then the token's
       version and protocol id, its expire timestamp (after the create
       timestamp), its nonce and its encrypted private part. */
    REQUIRE( make_token( 1, servers, 30, 5, 2, NULL, token ) == NETCODE_OK );
    memset( request, 0, sizeof( request ) );
    request[0] = 0;
    memcpy( request + 1, token, 13 + 8 );
    memcpy( request + 1 + 13 + 8, token + 13 + 8 + 8, 8 );
    memcpy( request + 1 + 13 + 8 + 8, token + 13 + 8 + 8 + 8, 24 + 1024 );
    REQUIRE( netcode_parse_address( "10.99.0.2:50000", &from ) == NETCODE_OK );
    context.sends = 0;
    before = log_lines;
    netcode_server_process_packet( context.server, &from, request, sizeof( request ) );
    say( "server: %d sends (a challenge), %d log line(s)", context.sends, log_lines - before );
    CHECK( context.sends == 1 );
    CHECK( log_lines >= before + 2 );
    CHECK( netcode_server_running( context.server ) == 1 );
    netcode_server_destroy( context.server );
}

/* --- loopback callbacks that destroy the other side */

struct loopback_pair
{
    struct netcode_server_t * server;
    struct netcode_client_t * client;
    int destroy_client_on_delivery;
};

static void pair_server_sends( void * context, int client_index, const uint8_t * data, int bytes, uint64_t sequence )
{
    struct loopback_pair * p = (struct loopback_pair *) context;
    (void) client_index;
    if ( p->client == NULL )
        return;
    netcode_client_process_loopback_packet( p->client, data, bytes, sequence );
    if ( p->destroy_client_on_delivery )
    {
        netcode_client_destroy( p->client );
        p->client = NULL;
    }
}

static void pair_client_sends( void * context, int client_index, const uint8_t * data, int bytes, uint64_t sequence )
{
    struct loopback_pair * p = (struct loopback_pair *) context;
    if ( p->server )
        netcode_server_process_loopback_packet( p->server, client_index, data, bytes, sequence );
}

static void loopback_destroys_the_other_side( void )
{
    struct loopback_pair pair;
    struct netcode_server_config_t server_config;
    struct netcode_client_config_t client_config;
    uint8_t data[32];

    say( "--- a loopback callback that destroys the client receiving the payload" );
    memset( &pair, 0, sizeof( pair ) );
    memset( data, 9, sizeof( data ) );
    server_config_for_tests( &server_config );
    server_config.callback_context = &pair;
    server_config.send_loopback_packet_callback = pair_server_sends;
    pair.server = create_override_server( &server_config, ignore_send, 0.0 );
    netcode_server_start( pair.server, 1 );
    netcode_default_client_config( &client_config );
    client_config.callback_context = &pair;
    client_config.send_loopback_packet_callback = pair_client_sends;
    pair.client = create_override_client( &client_config, ignore_send, 0.0 );
    netcode_server_connect_loopback_client( pair.server, 0, 1, NULL );
    netcode_client_connect_loopback( pair.client, 0, 1 );
    netcode_client_send_packet( pair.client, data, sizeof( data ) );
    pair.destroy_client_on_delivery = 1;
    netcode_server_send_packet( pair.server, 0, data, sizeof( data ) );
    CHECK( pair.client == NULL );
    netcode_server_update( pair.server, 1.0 );
    CHECK( netcode_server_client_connected( pair.server, 0 ) == 1 );
    netcode_server_destroy( pair.server );
    say( "client destroyed from the server's loopback callback; the server went on" );
}

/* --- the wrong kind of object */

static void wrong_objects( void )
{
    struct netcode_server_config_t server_config;
    struct netcode_client_config_t client_config;
    struct netcode_server_t * server;
    struct netcode_client_t * client;
    int bytes, before;
    uint64_t sequence;

    say( "--- a server given to client functions, a client to server functions" );
    server_config_for_tests( &server_config );
    server = create_override_server( &server_config, ignore_send, 0.0 );
    netcode_server_start( server, 2 );
    netcode_default_client_config( &client_config );
    client = create_override_client( &client_config, ignore_send, 0.0 );

    before = log_lines;
    netcode_client_update( (struct netcode_client_t *) server, 1.0 );
    CHECK( netcode_client_receive_packet( (struct netcode_client_t *) server, &bytes, &sequence ) == NULL );
    netcode_client_destroy( (struct netcode_client_t *) server );
    CHECK( log_lines >= before + 3 );
    before = log_lines;
    netcode_server_update( (struct netcode_server_t *) client, 1.0 );
    CHECK( netcode_server_num_connected_clients( (struct netcode_server_t *) client ) == 0 );
    netcode_server_destroy( (struct netcode_server_t *) client );
    CHECK( log_lines >= before + 3 );
    say( "refused with error lines; both objects still work" );
    CHECK( netcode_server_running( server ) == 1 );
    CHECK( netcode_client_state( client ) == NETCODE_CLIENT_STATE_DISCONNECTED );

    netcode_client_destroy( client );
    netcode_server_destroy( server );
    before = log_lines;
    netcode_server_destroy( server );
    CHECK( log_lines > before );
    say( "a server destroyed twice: the second destroy is an error line" );
}

/* --- objects called after their destroy */

static void destroyed_objects( void )
{
    struct netcode_server_config_t server_config;
    struct netcode_client_config_t client_config;
    struct netcode_server_t * server;
    struct netcode_client_t * client;
    int bytes, before;
    uint64_t sequence;

    say( "--- a client destroyed twice; a client and a server called after their destroy" );
    netcode_default_client_config( &client_config );
    client = create_override_client( &client_config, ignore_send, 0.0 );
    netcode_client_destroy( client );
    before = log_lines;
    netcode_client_destroy( client );
    netcode_client_update( client, 1.0 );
    CHECK( netcode_client_state( client ) == NETCODE_CLIENT_STATE_DISCONNECTED );
    CHECK( netcode_client_receive_packet( client, &bytes, &sequence ) == NULL );
    netcode_client_destroy( client );
    CHECK( log_lines >= before + 5 );

    server_config_for_tests( &server_config );
    server = create_override_server( &server_config, ignore_send, 0.0 );
    netcode_server_start( server, 2 );
    netcode_server_destroy( server );
    before = log_lines;
    netcode_server_update( server, 1.0 );
    CHECK( netcode_server_running( server ) == 0 );
    CHECK( netcode_server_receive_packet( server, 0, &bytes, &sequence ) == NULL );
    netcode_server_destroy( server );
    CHECK( log_lines >= before + 4 );
    say( "every call refused with an error line, nothing read" );
}

int main( void )
{
    start_test( "reentry", NETCODE_LOG_LEVEL_ERROR );

    client_destroyed_in_callback();
    server_destroyed_in_callback();
    overrides_call_in();
    loopback_destroys_the_other_side();
    wrong_objects();
    destroyed_objects();

    netcode_term();
    return finish();
}
