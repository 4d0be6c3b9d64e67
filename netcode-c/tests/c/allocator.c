/*
    Allocator callbacks: a client and a server whose configs carry counting
    allocate/free functions (and a context) connect over 127.0.0.1 UDP and
    exchange payloads. Every block the library asks for is tracked: it
    comes back through free_function exactly once, with the same context,
    by the time the object is destroyed (received packets included, those
    the test frees and those it leaves for destroy). An allocator that
    fails makes create fail with the ALLOCATE_*_FAILED code; one that
    returns misaligned memory is refused the same way or coped with; a
    zeroed config falls back to malloc/free. Nothing leaks.
*/

#include "common.h"

#define MAX_BLOCKS 4096

struct counting_allocator
{
    const char * name;
    void * blocks[MAX_BLOCKS];
    size_t sizes[MAX_BLOCKS];
    long allocations, frees, bad_frees, wrong_context;
    size_t outstanding_bytes;
    int fail;          /* return NULL */
    int offset;        /* return a pointer this far into the block */
};

static struct counting_allocator * expected_context = NULL;

static void * counting_allocate( void * context, size_t bytes )
{
    struct counting_allocator * a = (struct counting_allocator *) context;
    int i;
    char * block;
    if ( a == NULL || a != expected_context )
    {
        if ( a )
            a->wrong_context++;
        return NULL;
    }
    if ( a->fail )
        return NULL;
    block = (char *) malloc( bytes + 16 );
    if ( block == NULL )
        return NULL;
    for ( i = 0; i < MAX_BLOCKS; i++ )
    {
        if ( a->blocks[i] == NULL )
        {
            a->blocks[i] = block + a->offset;
            a->sizes[i] = bytes;
            a->allocations++;
            a->outstanding_bytes += bytes;
            return block + a->offset;
        }
    }
    free( block );
    return NULL;
}

static void counting_free( void * context, void * pointer )
{
    struct counting_allocator * a = (struct counting_allocator *) context;
    int i;
    if ( a == NULL || a != expected_context )
    {
        if ( a )
            a->wrong_context++;
        return;
    }
    if ( pointer == NULL )
        return;
    for ( i = 0; i < MAX_BLOCKS; i++ )
    {
        if ( a->blocks[i] == pointer )
        {
            a->blocks[i] = NULL;
            a->frees++;
            a->outstanding_bytes -= a->sizes[i];
            free( (char *) pointer - a->offset );
            return;
        }
    }
    a->bad_frees++;
}

static void report( struct counting_allocator * a )
{
    say( "%s: %ld allocations, %ld frees, %lu bytes outstanding, %ld bad frees, %ld wrong contexts", a->name,
         a->allocations, a->frees, (unsigned long) a->outstanding_bytes, a->bad_frees, a->wrong_context );
}

/* One allocator serves both objects here; expected_context says which. */
static struct counting_allocator client_allocator, server_allocator;

static void use( struct counting_allocator * a )
{
    expected_context = a;
}

int main( void )
{
    struct netcode_server_config_t server_config;
    struct netcode_client_config_t client_config;
    struct netcode_server_t * server;
    struct netcode_client_t * client;
    char address[64];
    const char * list[1];
    uint8_t token[NETCODE_CONNECT_TOKEN_BYTES];
    uint8_t data[NETCODE_MAX_PACKET_SIZE];
    uint8_t * held_by_client[8];
    uint8_t * held_by_server[8];
    int held_client = 0, held_server = 0, i, frames;
    long client_before, server_before;
    double t = 0.0;

    client_allocator.name = "client allocator";
    server_allocator.name = "server allocator";
    start_test( "allocator", NETCODE_LOG_LEVEL_INFO );
    free_ipv4_address( address );

    server_config_for_tests( &server_config );
    server_config.allocator_context = &server_allocator;
    server_config.allocate_function = counting_allocate;
    server_config.free_function = counting_free;
    use( &server_allocator );
    server = netcode_server_create( address, &server_config, t );
    REQUIRE( server != NULL );
    CHECK( server_allocator.allocations >= 1 );
    say( "server created: %ld allocation(s) through the callbacks", server_allocator.allocations );
    netcode_server_start( server, 2 );

    netcode_default_client_config( &client_config );
    client_config.allocator_context = &client_allocator;
    client_config.allocate_function = counting_allocate;
    client_config.free_function = counting_free;
    use( &client_allocator );
    client = netcode_client_create( "0.0.0.0", &client_config, t );
    REQUIRE( client != NULL );
    CHECK( client_allocator.allocations >= 1 );
    say( "client created: %ld allocation(s) through the callbacks", client_allocator.allocations );

    list[0] = address;
    REQUIRE( make_token( 1, list, 30, 5, 99, NULL, token ) == NETCODE_OK );
    use( &client_allocator );
    netcode_client_connect( client, token );
    for ( frames = 0; frames < 2000 && netcode_client_state( client ) != NETCODE_CLIENT_STATE_CONNECTED; frames++ )
    {
        t += 0.02;
        use( &client_allocator );
        netcode_client_update( client, t );
        use( &server_allocator );
        netcode_server_update( server, t );
        sleep_seconds( 0.002 );
    }
    REQUIRE( netcode_client_state( client ) == NETCODE_CLIENT_STATE_CONNECTED );

    /* Payloads: each received one is a block of the receiver's allocator
       until freed, and a freed block carries a later payload (or goes back
       to the allocator at destroy): with the test freeing each payload it
       does not hold before taking the next, a receiver allocates a block
       for each one held and one more. Some are left for destroy to free. */
    client_before = client_allocator.allocations;
    server_before = server_allocator.allocations;
    for ( frames = 0; frames < 200 && ( held_client < 8 || held_server < 8 ); frames++ )
    {
        int bytes;
        uint64_t sequence;
        uint8_t * packet;
        fill_payload( data, 100 + frames, 9 );
        use( &client_allocator );
        netcode_client_send_packet( client, data, 100 + frames );
        use( &server_allocator );
        netcode_server_send_packet( server, 0, data, 100 + frames );
        sleep_seconds( 0.002 );
        t += 0.02;
        use( &client_allocator );
        netcode_client_update( client, t );
        while ( ( packet = netcode_client_receive_packet( client, &bytes, &sequence ) ) != NULL )
        {
            CHECK( payload_ok( packet, bytes, 9 ) );
            CHECK( client_allocator.outstanding_bytes >= (size_t) bytes );
            if ( held_client < 8 && frames % 2 == 0 )
                held_by_client[held_client++] = packet;
            else
                netcode_client_free_packet( client, packet );
        }
        use( &server_allocator );
        netcode_server_update( server, t );
        while ( ( packet = netcode_server_receive_packet( server, 0, &bytes, &sequence ) ) != NULL )
        {
            CHECK( payload_ok( packet, bytes, 9 ) );
            if ( held_server < 8 && frames % 2 == 0 )
                held_by_server[held_server++] = packet;
            else
                netcode_server_free_packet( server, packet );
        }
    }
    say( "payloads exchanged; %d held by the test on the client, %d on the server", held_client, held_server );
    CHECK( held_client == 8 && held_server == 8 );
    say( "payload blocks allocated: %ld by the client, %ld by the server, for %d frames",
         client_allocator.allocations - client_before, server_allocator.allocations - server_before, frames );
    CHECK( client_allocator.allocations - client_before <= held_client + 1 );
    CHECK( server_allocator.allocations - server_before <= held_server + 1 );
    report( &client_allocator );
    report( &server_allocator );

    /* Half the held packets freed by the test, the rest left to destroy. */
    use( &client_allocator );
    for ( i = 0; i < held_client / 2; i++ )
        netcode_client_free_packet( client, held_by_client[i] );
    use( &server_allocator );
    for ( i = 0; i < held_server / 2; i++ )
        netcode_server_free_packet( server, held_by_server[i] );

    use( &client_allocator );
    netcode_client_destroy( client );
    use( &server_allocator );
    netcode_server_destroy( server );
    report( &client_allocator );
    report( &server_allocator );
    CHECK( client_allocator.allocations == client_allocator.frees );
    CHECK( server_allocator.allocations == server_allocator.frees );
    CHECK( client_allocator.outstanding_bytes == 0 && server_allocator.outstanding_bytes == 0 );
    CHECK( client_allocator.bad_frees == 0 && server_allocator.bad_frees == 0 );
    CHECK( client_allocator.wrong_context == 0 && server_allocator.wrong_context == 0 );
    CHECK( client_allocator.allocations > 8 && server_allocator.allocations > 8 );

    /* An allocator that fails: create fails with the allocation code. */
    client_allocator.fail = 1;
    server_allocator.fail = 1;
    use( &client_allocator );
    CHECK( netcode_client_create( "0.0.0.0", &client_config, t ) == NULL );
    CHECK( netcode_client_create_error() == NETCODE_CLIENT_CREATE_ERROR_ALLOCATE_CLIENT_FAILED );
    use( &server_allocator );
    CHECK( netcode_server_create( address, &server_config, t ) == NULL );
    CHECK( netcode_server_create_error() == NETCODE_SERVER_CREATE_ERROR_ALLOCATE_SERVER_FAILED );
    say( "failing allocator: create returns NULL with ALLOCATE_CLIENT_FAILED / ALLOCATE_SERVER_FAILED" );

    /* An allocator that returns misaligned memory: the library refuses it
       (create fails with the allocation code) or copes with it; either way
       every block comes back. */
    client_allocator.fail = 0;
    server_allocator.fail = 0;
    client_allocator.offset = 1;
    server_allocator.offset = 1;
    use( &client_allocator );
    client = netcode_client_create( "0.0.0.0", &client_config, t );
    if ( client == NULL )
    {
        CHECK( netcode_client_create_error() == NETCODE_CLIENT_CREATE_ERROR_ALLOCATE_CLIENT_FAILED );
        say( "misaligned allocator: client create refused (code %d)", netcode_client_create_error() );
    }
    else
    {
        say( "misaligned allocator: client created anyway" );
        netcode_client_update( client, t );
        netcode_client_destroy( client );
    }
    use( &server_allocator );
    server = netcode_server_create( address, &server_config, t );
    if ( server == NULL )
    {
        CHECK( netcode_server_create_error() == NETCODE_SERVER_CREATE_ERROR_ALLOCATE_SERVER_FAILED );
        say( "misaligned allocator: server create refused (code %d)", netcode_server_create_error() );
    }
    else
    {
        say( "misaligned allocator: server created anyway" );
        netcode_server_start( server, 1 );
        netcode_server_update( server, t );
        netcode_server_destroy( server );
    }
    report( &client_allocator );
    report( &server_allocator );
    CHECK( client_allocator.allocations == client_allocator.frees );
    CHECK( server_allocator.allocations == server_allocator.frees );
    CHECK( client_allocator.bad_frees == 0 && server_allocator.bad_frees == 0 );
    client_allocator.offset = 0;
    server_allocator.offset = 0;

    /* A zeroed config (no allocator functions) falls back to malloc/free. */
    memset( &client_config, 0, sizeof( client_config ) );
    client = netcode_client_create( "0.0.0.0", &client_config, t );
    CHECK( client != NULL );
    if ( client )
        netcode_client_destroy( client );
    memset( &server_config, 0, sizeof( server_config ) );
    server = netcode_server_create( address, &server_config, t );
    CHECK( server != NULL );
    if ( server )
        netcode_server_destroy( server );
    say( "zeroed configs: client and server created with malloc/free" );

    netcode_term();
    return finish();
}
