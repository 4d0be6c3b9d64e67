/*
    A program built against a netcode.h from before the reference's 1.4.5,
    whose server config has no max_connect_token_lifetime (120 bytes on
    64-bit targets), running on this library: it declares what that header
    declared, not this library's netcode.h. Its config sits at the very end
    of a page with an inaccessible page after it, so that a library reading
    or writing the 128-byte config of the newer header would fault here.
    The defaults fill it, a server is made from it and destroyed.
*/

#define _DEFAULT_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct netcode_address_t;
struct netcode_network_simulator_t;
struct netcode_server_t;

/* The server config as the header before 1.4.5 had it. */
struct netcode_server_config_t
{
    uint64_t protocol_id;
    uint8_t private_key[32];
    void * allocator_context;
    void * (*allocate_function)(void*,size_t);
    void (*free_function)(void*,void*);
    struct netcode_network_simulator_t * network_simulator;
    void * callback_context;
    void (*connect_disconnect_callback)(void*,int,int);
    void (*send_loopback_packet_callback)(void*,int,const uint8_t*,int,uint64_t);
    int override_send_and_receive;
    void (*send_packet_override)(void*,struct netcode_address_t*,const uint8_t*,int);
    int (*receive_packet_override)(void*,struct netcode_address_t*,uint8_t*,int);
};

int netcode_init( void );
void netcode_term( void );
void netcode_default_server_config( struct netcode_server_config_t * config );
struct netcode_server_t * netcode_server_create( const char * server_address, const struct netcode_server_config_t * config, double time );
struct netcode_server_t * netcode_server_create_dual( const char * server_address1, const char * server_address2, const struct netcode_server_config_t * config, double time );
int netcode_server_running( struct netcode_server_t * server );
void netcode_server_destroy( struct netcode_server_t * server );

static int failures = 0;

#define CHECK( condition )                                                          \
    do                                                                              \
    {                                                                               \
        if ( !( condition ) )                                                       \
        {                                                                           \
            fprintf( stderr, "[old_header] CHECK FAILED at %s:%d: %s\n", __FILE__, \
                     __LINE__, #condition );                                        \
            failures++;                                                             \
        }                                                                           \
    } while ( 0 )

int main( void )
{
    long page = sysconf( _SC_PAGESIZE );
    uint8_t * pages;
    struct netcode_server_config_t * config;
    struct netcode_server_t * server;
    int i;

    if ( sizeof( void * ) == 8 )
        CHECK( sizeof( struct netcode_server_config_t ) == 120 );
    pages = (uint8_t *) mmap( NULL, (size_t) page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0 );
    CHECK( pages != MAP_FAILED );
    if ( pages == MAP_FAILED )
        return 1;
    CHECK( mprotect( pages + page, (size_t) page, PROT_NONE ) == 0 );
    /* The config's last byte is the page's last byte. */
    config = (struct netcode_server_config_t *) ( pages + page - sizeof( struct netcode_server_config_t ) );

    CHECK( netcode_init() == 1 );
    memset( config, 0xEE, sizeof( *config ) );
    netcode_default_server_config( config );
    CHECK( config->protocol_id == 0 );
    CHECK( config->override_send_and_receive == 0 );
    CHECK( config->allocate_function != NULL );
    config->protocol_id = 0x1122334455667788ULL;
    for ( i = 0; i < 32; i++ )
        config->private_key[i] = (uint8_t) i;

    server = netcode_server_create( "127.0.0.1:0", config, 0.0 );
    CHECK( server != NULL );
    if ( server )
    {
        CHECK( netcode_server_running( server ) == 0 );
        netcode_server_destroy( server );
    }
    server = netcode_server_create_dual( "127.0.0.1:0", "[::1]:0", config, 0.0 );
    if ( server )
        netcode_server_destroy( server );

    netcode_term();
    munmap( pages, (size_t) page * 2 );
    if ( failures == 0 )
        printf( "[old_header] a 120-byte server config at a page's end: defaults, create, destroy: ok\n" );
    return failures == 0 ? 0 : 1;
}
