/*
    The program run.sh builds against an installed libnetcode, once with
    pkg-config (shared and static) and once with CMake's find_package:
    the header is found, the library links, and it works (a token is made,
    a server starts on a free port and stops).
*/

#include "netcode.h"

#include <stdio.h>
#include <string.h>

int main( void )
{
    struct netcode_address_t address;
    struct netcode_server_config_t config;
    struct netcode_server_t * server;
    const char * servers[1];
    uint8_t token[NETCODE_CONNECT_TOKEN_BYTES];
    char text[256];
    int ok = 1;

    servers[0] = "127.0.0.1:40000";
    ok &= netcode_init() == NETCODE_OK;
    ok &= netcode_parse_address( "127.0.0.1:40000", &address ) == NETCODE_OK;
    ok &= strcmp( netcode_address_to_string( &address, text ), "127.0.0.1:40000" ) == 0;
    netcode_default_server_config( &config );
    config.protocol_id = 0x1122334455667788ULL;
    netcode_random_bytes( config.private_key, NETCODE_KEY_BYTES );
    ok &= netcode_generate_connect_token( 1, servers, servers, 30, 5, 1, config.protocol_id, config.private_key,
                                          NULL, token ) == NETCODE_OK;
    server = netcode_server_create( "127.0.0.1:0", &config, 0.0 );
    ok &= server != NULL;
    if ( server )
    {
        netcode_server_start( server, 4 );
        ok &= netcode_server_running( server ) == 1;
        ok &= netcode_server_get_port( server ) != 0;
        netcode_server_destroy( server );
    }
    netcode_term();
    printf( "[installed] libnetcode %s from %s: %s\n", NETCODE_VERSION_FULL, __FILE__, ok ? "works" : "FAILED" );
    return ok ? 0 : 1;
}
