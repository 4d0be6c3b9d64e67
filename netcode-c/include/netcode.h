/*
    netcode.h for libnetcode, the C library built by the netcode-c crate of
    the netcode for Rust project: netcode 1.02 clients and servers,
    implemented in Rust, behind the interface of the C library's header.

    Copyright (c) 2026 The netcode for Rust developers.
    Licensed under the MIT licence or the Apache License 2.0, at your option
    (SPDX-License-Identifier: MIT OR Apache-2.0).

    Declarations only; C89 and C++ compatible. Every function checks the
    pointers and sizes it is given where a mistake can be detected, logs
    the mistake at error level and returns its error value. See
    netcode-c/README.md for what differs from the C library.
*/

#ifndef NETCODE_H
#define NETCODE_H

#define NETCODE_VERSION_FULL    "1.4.8"
#define NETCODE_VERSION_MAJOR   1
#define NETCODE_VERSION_MINOR   4
#define NETCODE_VERSION_PATCH   8

/* Single-threaded: call the library from one thread, or lock around it. */

#include <stdint.h>
#include <stddef.h>

/* Exactly one of NETCODE_DEBUG and NETCODE_RELEASE; NDEBUG picks release. */
#if !defined(NETCODE_DEBUG) && !defined(NETCODE_RELEASE)
#if defined(NDEBUG)
#define NETCODE_RELEASE
#else
#define NETCODE_DEBUG
#endif
#elif defined(NETCODE_DEBUG) && defined(NETCODE_RELEASE)
#error Define NETCODE_DEBUG or NETCODE_RELEASE, not both
#endif

/* Byte order of the target: the compiler's own answer where it gives one,
   else a list of little-endian architectures. */
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && defined(__ORDER_BIG_ENDIAN__)
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NETCODE_LITTLE_ENDIAN 1
#else
#define NETCODE_BIG_ENDIAN 1
#endif
#elif defined(__LITTLE_ENDIAN__) \
    || defined(__386__) || defined(i386) || defined(__i386__) || defined(__X86) || defined(_M_IX86) \
    || defined(_M_X64) || defined(__x86_64__) \
    || defined(alpha) || defined(__alpha) || defined(__alpha__) || defined(_M_ALPHA) \
    || defined(ARM) || defined(_ARM) || defined(__arm__) || defined(__aarch64__) \
    || defined(WIN32) || defined(_WIN32) || defined(__WIN32__) || defined(_WIN32_WCE) || defined(__NT__) \
    || defined(__MIPSEL__)
#define NETCODE_LITTLE_ENDIAN 1
#else
#define NETCODE_BIG_ENDIAN 1
#endif

#define NETCODE_PLATFORM_WINDOWS    1
#define NETCODE_PLATFORM_MAC        2
#define NETCODE_PLATFORM_UNIX       3

#if defined(_WIN32)
#define NETCODE_PLATFORM NETCODE_PLATFORM_WINDOWS
#elif defined(__APPLE__)
#define NETCODE_PLATFORM NETCODE_PLATFORM_MAC
#else
#define NETCODE_PLATFORM NETCODE_PLATFORM_UNIX
#endif

/* Sizes, in bytes, and limits. */
#define NETCODE_CONNECT_TOKEN_BYTES 2048
#define NETCODE_KEY_BYTES 32
#define NETCODE_MAC_BYTES 16
#define NETCODE_USER_DATA_BYTES 256
#define NETCODE_MAX_SERVERS_PER_CONNECT 32

/* Client states: negative values are the ways a connection ends. */
#define NETCODE_CLIENT_STATE_CONNECT_TOKEN_EXPIRED              -6
#define NETCODE_CLIENT_STATE_INVALID_CONNECT_TOKEN              -5
#define NETCODE_CLIENT_STATE_CONNECTION_TIMED_OUT               -4
#define NETCODE_CLIENT_STATE_CONNECTION_RESPONSE_TIMED_OUT      -3
#define NETCODE_CLIENT_STATE_CONNECTION_REQUEST_TIMED_OUT       -2
#define NETCODE_CLIENT_STATE_CONNECTION_DENIED                  -1
#define NETCODE_CLIENT_STATE_DISCONNECTED                       0
#define NETCODE_CLIENT_STATE_SENDING_CONNECTION_REQUEST         1
#define NETCODE_CLIENT_STATE_SENDING_CONNECTION_RESPONSE        2
#define NETCODE_CLIENT_STATE_CONNECTED                          3

/* Why a server slot's client last left (netcode_server_client_disconnect_reason). */
#define NETCODE_SERVER_CLIENT_DISCONNECT_REASON_NONE                0
#define NETCODE_SERVER_CLIENT_DISCONNECT_REASON_TIMED_OUT           1
#define NETCODE_SERVER_CLIENT_DISCONNECT_REASON_CLIENT_DISCONNECT   2
#define NETCODE_SERVER_CLIENT_DISCONNECT_REASON_SERVER_DISCONNECT   3

/* netcode_client_create_error() after a create call. */
#define NETCODE_CLIENT_CREATE_ERROR_NONE                        0
#define NETCODE_CLIENT_CREATE_ERROR_PARSE_ADDRESS_FAILED        1
#define NETCODE_CLIENT_CREATE_ERROR_PARSE_ADDRESS2_FAILED       2
#define NETCODE_CLIENT_CREATE_ERROR_SIMULATOR_REQUIRES_PORT     3
#define NETCODE_CLIENT_CREATE_ERROR_CREATE_SOCKET_IPV4_FAILED   4
#define NETCODE_CLIENT_CREATE_ERROR_CREATE_SOCKET_IPV6_FAILED   5
#define NETCODE_CLIENT_CREATE_ERROR_ALLOCATE_CLIENT_FAILED      6
#define NETCODE_CLIENT_CREATE_ERROR_MISSING_OVERRIDE_CALLBACK   7

/* netcode_server_create_error() after a create call. */
#define NETCODE_SERVER_CREATE_ERROR_NONE                        0
#define NETCODE_SERVER_CREATE_ERROR_PARSE_ADDRESS_FAILED        1
#define NETCODE_SERVER_CREATE_ERROR_PARSE_ADDRESS2_FAILED       2
#define NETCODE_SERVER_CREATE_ERROR_CREATE_SOCKET_IPV4_FAILED   3
#define NETCODE_SERVER_CREATE_ERROR_CREATE_SOCKET_IPV6_FAILED   4
#define NETCODE_SERVER_CREATE_ERROR_BIND_SOCKET_IPV4_FAILED     5
#define NETCODE_SERVER_CREATE_ERROR_BIND_SOCKET_IPV6_FAILED     6
#define NETCODE_SERVER_CREATE_ERROR_ALLOCATE_SERVER_FAILED      7
#define NETCODE_SERVER_CREATE_ERROR_MISSING_OVERRIDE_CALLBACK   8

#define NETCODE_MAX_CLIENTS         256
#define NETCODE_MAX_PACKET_SIZE     1200

/* The longest connect token lifetime, in seconds, a server admits tokens
   for by default (netcode_server_config_t.max_connect_token_lifetime). */
#define NETCODE_DEFAULT_MAX_CONNECT_TOKEN_LIFETIME 30

#define NETCODE_LOG_LEVEL_NONE      0
#define NETCODE_LOG_LEVEL_ERROR     1
#define NETCODE_LOG_LEVEL_INFO      2
#define NETCODE_LOG_LEVEL_DEBUG     3

#define NETCODE_OK                  1
#define NETCODE_ERROR               0

#define NETCODE_ADDRESS_NONE        0
#define NETCODE_ADDRESS_IPV4        1
#define NETCODE_ADDRESS_IPV6        2

#ifdef __cplusplus
#define NETCODE_CONST const
extern "C" {
#else
#if defined(__STDC__)
#define NETCODE_CONST const
#else
#define NETCODE_CONST
#endif
#endif

int netcode_init(void);

void netcode_term(void);

/* Whether packet tagging is offered at all (off by default under MinGW);
   netcode_enable_packet_tagging turns it on for sockets created after. */
#ifndef NETCODE_PACKET_TAGGING
#ifndef __MINGW32__
#define NETCODE_PACKET_TAGGING 1
#else
#define NETCODE_PACKET_TAGGING 0
#endif
#endif

void netcode_enable_packet_tagging(void);

/* An IPv4 or IPv6 address and port. IPv6 groups are in host order. */
struct netcode_address_t
{
    union { uint8_t ipv4[4]; uint16_t ipv6[8]; } data;
    uint16_t port;
    uint8_t type;
};

int netcode_parse_address( NETCODE_CONST char * address_string_in, struct netcode_address_t * address );

/* buffer: at least 256 bytes. Returns buffer. */
char * netcode_address_to_string( struct netcode_address_t * address, char * buffer );

int netcode_address_equal( struct netcode_address_t * a, struct netcode_address_t * b );

struct netcode_client_config_t
{
    void * allocator_context;
    void * (*allocate_function)(void*,size_t);
    void (*free_function)(void*,void*);
    struct netcode_network_simulator_t * network_simulator;
    void * callback_context;
    void (*state_change_callback)(void*,int,int);
    void (*send_loopback_packet_callback)(void*,int,NETCODE_CONST uint8_t*,int,uint64_t);
    int override_send_and_receive;
    void (*send_packet_override)(void*,struct netcode_address_t*,NETCODE_CONST uint8_t*,int);
    int (*receive_packet_override)(void*,struct netcode_address_t*,uint8_t*,int);
};

void netcode_default_client_config( struct netcode_client_config_t * config );

struct netcode_client_t * netcode_client_create( NETCODE_CONST char * address, NETCODE_CONST struct netcode_client_config_t * config, double time );

struct netcode_client_t * netcode_client_create_dual( NETCODE_CONST char * address1, NETCODE_CONST char * address2, NETCODE_CONST struct netcode_client_config_t * config, double time );

/* The NETCODE_CLIENT_CREATE_ERROR_* code of the last client create call. */
int netcode_client_create_error(void);

void netcode_client_destroy( struct netcode_client_t * client );

void netcode_client_connect( struct netcode_client_t * client, uint8_t * connect_token );

void netcode_client_update( struct netcode_client_t * client, double time );

uint64_t netcode_client_next_packet_sequence( struct netcode_client_t * client );

void netcode_client_send_packet( struct netcode_client_t * client, NETCODE_CONST uint8_t * packet_data, int packet_bytes );

/* Release what this returns with netcode_client_free_packet, on the same client. */
uint8_t * netcode_client_receive_packet( struct netcode_client_t * client, int * packet_bytes, uint64_t * packet_sequence );

void netcode_client_free_packet( struct netcode_client_t * client, void * packet );

void netcode_client_disconnect( struct netcode_client_t * client );

int netcode_client_state( struct netcode_client_t * client );

int netcode_client_index( struct netcode_client_t * client );

int netcode_client_max_clients( struct netcode_client_t * client );

void netcode_client_connect_loopback( struct netcode_client_t * client, int client_index, int max_clients );

void netcode_client_disconnect_loopback( struct netcode_client_t * client );

void netcode_client_process_packet( struct netcode_client_t * client, struct netcode_address_t * from, uint8_t * packet_data, int packet_bytes );

int netcode_client_loopback( struct netcode_client_t * client );

void netcode_client_process_loopback_packet( struct netcode_client_t * client, NETCODE_CONST uint8_t * packet_data, int packet_bytes, uint64_t packet_sequence );

uint16_t netcode_client_get_port( struct netcode_client_t * client );

/* Points into the client; valid until the next call on it. */
struct netcode_address_t * netcode_client_server_address( struct netcode_client_t * client );

/* connect_token: NETCODE_CONNECT_TOKEN_BYTES bytes; user_data: NULL or
   NETCODE_USER_DATA_BYTES bytes. A negative expire_seconds never expires. */
int netcode_generate_connect_token( int num_server_addresses,
                                    NETCODE_CONST char ** public_server_addresses,
                                    NETCODE_CONST char ** internal_server_addresses,
                                    int expire_seconds,
                                    int timeout_seconds,
                                    uint64_t client_id,
                                    uint64_t protocol_id,
                                    NETCODE_CONST uint8_t * private_key,
                                    uint8_t * user_data,
                                    uint8_t * connect_token );

struct netcode_server_config_t
{
    uint64_t protocol_id;
    uint8_t private_key[NETCODE_KEY_BYTES];
    void * allocator_context;
    void * (*allocate_function)(void*,size_t);
    void (*free_function)(void*,void*);
    struct netcode_network_simulator_t * network_simulator;
    void * callback_context;
    void (*connect_disconnect_callback)(void*,int,int);
    void (*send_loopback_packet_callback)(void*,int,NETCODE_CONST uint8_t*,int,uint64_t);
    int override_send_and_receive;
    void (*send_packet_override)(void*,struct netcode_address_t*,NETCODE_CONST uint8_t*,int);
    int (*receive_packet_override)(void*,struct netcode_address_t*,uint8_t*,int);
    int max_connect_token_lifetime;
};

/* The server config grew max_connect_token_lifetime in the reference's
   1.4.5 (120 bytes became 128 on 64-bit targets) under the same library
   name. A program built with this header calls the _v2 functions, which
   read and write every field; the library also exports the three names
   without _v2 for programs built against an older header, and those read
   and write only the fields before max_connect_token_lifetime (which
   then takes its default). */
void netcode_default_server_config_v2( struct netcode_server_config_t * config );

struct netcode_server_t * netcode_server_create_v2( NETCODE_CONST char * server_address, NETCODE_CONST struct netcode_server_config_t * config, double time );

struct netcode_server_t * netcode_server_create_dual_v2( NETCODE_CONST char * server_address1, NETCODE_CONST char * server_address2, NETCODE_CONST struct netcode_server_config_t * config, double time );

#define netcode_default_server_config netcode_default_server_config_v2
#define netcode_server_create netcode_server_create_v2
#define netcode_server_create_dual netcode_server_create_dual_v2

/* The NETCODE_SERVER_CREATE_ERROR_* code of the last server create call. */
int netcode_server_create_error(void);

void netcode_server_destroy( struct netcode_server_t * server );

void netcode_server_start( struct netcode_server_t * server, int max_clients );

void netcode_server_stop( struct netcode_server_t * server );

int netcode_server_running( struct netcode_server_t * server );

int netcode_server_max_clients( struct netcode_server_t * server );

void netcode_server_update( struct netcode_server_t * server, double time );

int netcode_server_client_connected( struct netcode_server_t * server, int client_index );

int netcode_server_client_disconnect_reason( struct netcode_server_t * server, int client_index );

uint64_t netcode_server_client_id( struct netcode_server_t * server, int client_index );

/* Points into the server; valid until the next call on it. */
struct netcode_address_t * netcode_server_client_address( struct netcode_server_t * server, int client_index );

void netcode_server_disconnect_client( struct netcode_server_t * server, int client_index );

void netcode_server_disconnect_all_clients( struct netcode_server_t * server );

uint64_t netcode_server_next_packet_sequence( struct netcode_server_t * server, int client_index );

void netcode_server_send_packet( struct netcode_server_t * server, int client_index, NETCODE_CONST uint8_t * packet_data, int packet_bytes );

/* Release what this returns with netcode_server_free_packet, on the same server. */
uint8_t * netcode_server_receive_packet( struct netcode_server_t * server, int client_index, int * packet_bytes, uint64_t * packet_sequence );

void netcode_server_free_packet( struct netcode_server_t * server, void * packet );

int netcode_server_num_connected_clients( struct netcode_server_t * server );

void * netcode_server_client_user_data( struct netcode_server_t * server, int client_index );

void netcode_server_process_packet( struct netcode_server_t * server, struct netcode_address_t * from, uint8_t * packet_data, int packet_bytes );

void netcode_server_connect_loopback_client( struct netcode_server_t * server, int client_index, uint64_t client_id, NETCODE_CONST uint8_t * user_data );

void netcode_server_disconnect_loopback_client( struct netcode_server_t * server, int client_index );

int netcode_server_client_loopback( struct netcode_server_t * server, int client_index );

void netcode_server_process_loopback_packet( struct netcode_server_t * server, int client_index, NETCODE_CONST uint8_t * packet_data, int packet_bytes, uint64_t packet_sequence );

uint16_t netcode_server_get_port( struct netcode_server_t * server );

void netcode_log_level( int level );

/* Where log lines go (printf by default). */
void netcode_set_printf_function( int (*function)( NETCODE_CONST char *, ... ) );

/* Called by netcode_assert with the condition's text, function, file and line. */
extern void (*netcode_assert_function)( NETCODE_CONST char * condition, NETCODE_CONST char * function, NETCODE_CONST char * file, int line );

/* The enclosing function's name where the language has a way to say it. */
#if defined(_MSC_VER)
#define NETCODE_CURRENT_FUNCTION __FUNCTION__
#elif (defined(__cplusplus) && __cplusplus >= 201103L) || (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 199901L)
#define NETCODE_CURRENT_FUNCTION __func__
#elif defined(__GNUC__)
#define NETCODE_CURRENT_FUNCTION (__extension__ __FUNCTION__)
#else
#define NETCODE_CURRENT_FUNCTION "?"
#endif

#ifndef NDEBUG
#define netcode_assert( condition )                                                 \
do                                                                                  \
{                                                                                   \
    if ( !(condition) )                                                             \
    {                                                                               \
        netcode_assert_function( #condition, NETCODE_CURRENT_FUNCTION, __FILE__, __LINE__ );\
    }                                                                               \
} while(0)
#else
#define netcode_assert( ignore ) ((void)0)
#endif

/* Replaces the handler netcode_assert calls; a handler of yours may return. */
void netcode_set_assert_function( void (*function)( NETCODE_CONST char * condition,
                                                    NETCODE_CONST char * function,
                                                    NETCODE_CONST char * file,
                                                    int line ) );

void netcode_random_bytes( uint8_t * data, int bytes );

void netcode_sleep( double seconds );

double netcode_time(void);

#ifdef __cplusplus
}
#endif

#endif /* NETCODE_H */
