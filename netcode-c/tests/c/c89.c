/*
    The header as C89: run.sh compiles this file with
    cc -std=c89 -pedantic -Werror -Wall -Wextra -Wstrict-prototypes -fsyntax-only
    (and as C99, C11 and gnu89). Every function is assigned to a pointer of
    the type the C library's header gives it, so a changed signature fails
    the compile; the macros are used as a C89 program would.
*/

#include "netcode.h"

#if !defined(NETCODE_LITTLE_ENDIAN) && !defined(NETCODE_BIG_ENDIAN)
#error no byte order
#endif
#if !defined(NETCODE_DEBUG) && !defined(NETCODE_RELEASE)
#error neither debug nor release
#endif
#if NETCODE_PLATFORM != NETCODE_PLATFORM_UNIX && NETCODE_PLATFORM != NETCODE_PLATFORM_MAC && NETCODE_PLATFORM != NETCODE_PLATFORM_WINDOWS
#error no platform
#endif
#if NETCODE_PACKET_TAGGING != 0 && NETCODE_PACKET_TAGGING != 1
#error NETCODE_PACKET_TAGGING is 0 or 1
#endif

int c89_signatures( void );

int c89_signatures( void )
{
    int (*init)(void) = netcode_init;
    void (*term)(void) = netcode_term;
    void (*tagging)(void) = netcode_enable_packet_tagging;
    int (*parse)(NETCODE_CONST char *, struct netcode_address_t *) = netcode_parse_address;
    char * (*to_string)(struct netcode_address_t *, char *) = netcode_address_to_string;
    int (*equal)(struct netcode_address_t *, struct netcode_address_t *) = netcode_address_equal;
    void (*default_client_config)(struct netcode_client_config_t *) = netcode_default_client_config;
    struct netcode_client_t * (*client_create)(NETCODE_CONST char *, NETCODE_CONST struct netcode_client_config_t *, double) = netcode_client_create;
    struct netcode_client_t * (*client_create_dual)(NETCODE_CONST char *, NETCODE_CONST char *, NETCODE_CONST struct netcode_client_config_t *, double) = netcode_client_create_dual;
    int (*client_create_error)(void) = netcode_client_create_error;
    void (*client_destroy)(struct netcode_client_t *) = netcode_client_destroy;
    void (*client_connect)(struct netcode_client_t *, uint8_t *) = netcode_client_connect;
    void (*client_update)(struct netcode_client_t *, double) = netcode_client_update;
    uint64_t (*client_next_packet_sequence)(struct netcode_client_t *) = netcode_client_next_packet_sequence;
    void (*client_send_packet)(struct netcode_client_t *, NETCODE_CONST uint8_t *, int) = netcode_client_send_packet;
    uint8_t * (*client_receive_packet)(struct netcode_client_t *, int *, uint64_t *) = netcode_client_receive_packet;
    void (*client_free_packet)(struct netcode_client_t *, void *) = netcode_client_free_packet;
    void (*client_disconnect)(struct netcode_client_t *) = netcode_client_disconnect;
    int (*client_state)(struct netcode_client_t *) = netcode_client_state;
    int (*client_index)(struct netcode_client_t *) = netcode_client_index;
    int (*client_max_clients)(struct netcode_client_t *) = netcode_client_max_clients;
    void (*client_connect_loopback)(struct netcode_client_t *, int, int) = netcode_client_connect_loopback;
    void (*client_disconnect_loopback)(struct netcode_client_t *) = netcode_client_disconnect_loopback;
    void (*client_process_packet)(struct netcode_client_t *, struct netcode_address_t *, uint8_t *, int) = netcode_client_process_packet;
    int (*client_loopback)(struct netcode_client_t *) = netcode_client_loopback;
    void (*client_process_loopback_packet)(struct netcode_client_t *, NETCODE_CONST uint8_t *, int, uint64_t) = netcode_client_process_loopback_packet;
    uint16_t (*client_get_port)(struct netcode_client_t *) = netcode_client_get_port;
    struct netcode_address_t * (*client_server_address)(struct netcode_client_t *) = netcode_client_server_address;
    int (*generate)(int, NETCODE_CONST char **, NETCODE_CONST char **, int, int, uint64_t, uint64_t, NETCODE_CONST uint8_t *, uint8_t *, uint8_t *) = netcode_generate_connect_token;
    void (*default_server_config)(struct netcode_server_config_t *) = netcode_default_server_config;
    struct netcode_server_t * (*server_create)(NETCODE_CONST char *, NETCODE_CONST struct netcode_server_config_t *, double) = netcode_server_create;
    struct netcode_server_t * (*server_create_dual)(NETCODE_CONST char *, NETCODE_CONST char *, NETCODE_CONST struct netcode_server_config_t *, double) = netcode_server_create_dual;
    int (*server_create_error)(void) = netcode_server_create_error;
    void (*server_destroy)(struct netcode_server_t *) = netcode_server_destroy;
    void (*server_start)(struct netcode_server_t *, int) = netcode_server_start;
    void (*server_stop)(struct netcode_server_t *) = netcode_server_stop;
    int (*server_running)(struct netcode_server_t *) = netcode_server_running;
    int (*server_max_clients)(struct netcode_server_t *) = netcode_server_max_clients;
    void (*server_update)(struct netcode_server_t *, double) = netcode_server_update;
    int (*server_client_connected)(struct netcode_server_t *, int) = netcode_server_client_connected;
    int (*server_client_disconnect_reason)(struct netcode_server_t *, int) = netcode_server_client_disconnect_reason;
    uint64_t (*server_client_id)(struct netcode_server_t *, int) = netcode_server_client_id;
    struct netcode_address_t * (*server_client_address)(struct netcode_server_t *, int) = netcode_server_client_address;
    void (*server_disconnect_client)(struct netcode_server_t *, int) = netcode_server_disconnect_client;
    void (*server_disconnect_all_clients)(struct netcode_server_t *) = netcode_server_disconnect_all_clients;
    uint64_t (*server_next_packet_sequence)(struct netcode_server_t *, int) = netcode_server_next_packet_sequence;
    void (*server_send_packet)(struct netcode_server_t *, int, NETCODE_CONST uint8_t *, int) = netcode_server_send_packet;
    uint8_t * (*server_receive_packet)(struct netcode_server_t *, int, int *, uint64_t *) = netcode_server_receive_packet;
    void (*server_free_packet)(struct netcode_server_t *, void *) = netcode_server_free_packet;
    int (*server_num_connected_clients)(struct netcode_server_t *) = netcode_server_num_connected_clients;
    void * (*server_client_user_data)(struct netcode_server_t *, int) = netcode_server_client_user_data;
    void (*server_process_packet)(struct netcode_server_t *, struct netcode_address_t *, uint8_t *, int) = netcode_server_process_packet;
    void (*server_connect_loopback_client)(struct netcode_server_t *, int, uint64_t, NETCODE_CONST uint8_t *) = netcode_server_connect_loopback_client;
    void (*server_disconnect_loopback_client)(struct netcode_server_t *, int) = netcode_server_disconnect_loopback_client;
    int (*server_client_loopback)(struct netcode_server_t *, int) = netcode_server_client_loopback;
    void (*server_process_loopback_packet)(struct netcode_server_t *, int, NETCODE_CONST uint8_t *, int, uint64_t) = netcode_server_process_loopback_packet;
    uint16_t (*server_get_port)(struct netcode_server_t *) = netcode_server_get_port;
    void (*log_level)(int) = netcode_log_level;
    void (*set_printf)(int (*)(NETCODE_CONST char *, ...)) = netcode_set_printf_function;
    void (*set_assert)(void (*)(NETCODE_CONST char *, NETCODE_CONST char *, NETCODE_CONST char *, int)) = netcode_set_assert_function;
    void (**assert_hook)(NETCODE_CONST char *, NETCODE_CONST char *, NETCODE_CONST char *, int) = &netcode_assert_function;
    void (*random_bytes)(uint8_t *, int) = netcode_random_bytes;
    void (*sleep_for)(double) = netcode_sleep;
    double (*time_now)(void) = netcode_time;

    struct netcode_address_t address;
    struct netcode_client_config_t client_config;
    struct netcode_server_config_t server_config;
    int n = 0;

    /* The struct fields by name, as C89 code assigns them. */
    address.data.ipv4[0] = 127;
    address.data.ipv6[7] = 1;
    address.port = 40000;
    address.type = NETCODE_ADDRESS_IPV4;
    client_config.allocator_context = 0;
    client_config.allocate_function = 0;
    client_config.free_function = 0;
    client_config.network_simulator = 0;
    client_config.callback_context = 0;
    client_config.state_change_callback = 0;
    client_config.send_loopback_packet_callback = 0;
    client_config.override_send_and_receive = 0;
    client_config.send_packet_override = 0;
    client_config.receive_packet_override = 0;
    server_config.protocol_id = 0;
    server_config.private_key[NETCODE_KEY_BYTES - 1] = 0;
    server_config.allocator_context = 0;
    server_config.allocate_function = 0;
    server_config.free_function = 0;
    server_config.network_simulator = 0;
    server_config.callback_context = 0;
    server_config.connect_disconnect_callback = 0;
    server_config.send_loopback_packet_callback = 0;
    server_config.override_send_and_receive = 0;
    server_config.send_packet_override = 0;
    server_config.receive_packet_override = 0;
    server_config.max_connect_token_lifetime = NETCODE_DEFAULT_MAX_CONNECT_TOKEN_LIFETIME;

    netcode_assert( n == 0 );

    n += init != 0; n += term != 0; n += tagging != 0; n += parse != 0; n += to_string != 0; n += equal != 0;
    n += default_client_config != 0; n += client_create != 0; n += client_create_dual != 0;
    n += client_create_error != 0; n += client_destroy != 0; n += client_connect != 0; n += client_update != 0;
    n += client_next_packet_sequence != 0; n += client_send_packet != 0; n += client_receive_packet != 0;
    n += client_free_packet != 0; n += client_disconnect != 0; n += client_state != 0; n += client_index != 0;
    n += client_max_clients != 0; n += client_connect_loopback != 0; n += client_disconnect_loopback != 0;
    n += client_process_packet != 0; n += client_loopback != 0; n += client_process_loopback_packet != 0;
    n += client_get_port != 0; n += client_server_address != 0; n += generate != 0; n += default_server_config != 0;
    n += server_create != 0; n += server_create_dual != 0; n += server_create_error != 0; n += server_destroy != 0;
    n += server_start != 0; n += server_stop != 0; n += server_running != 0; n += server_max_clients != 0;
    n += server_update != 0; n += server_client_connected != 0; n += server_client_disconnect_reason != 0;
    n += server_client_id != 0; n += server_client_address != 0; n += server_disconnect_client != 0;
    n += server_disconnect_all_clients != 0; n += server_next_packet_sequence != 0; n += server_send_packet != 0;
    n += server_receive_packet != 0; n += server_free_packet != 0; n += server_num_connected_clients != 0;
    n += server_client_user_data != 0; n += server_process_packet != 0; n += server_connect_loopback_client != 0;
    n += server_disconnect_loopback_client != 0; n += server_client_loopback != 0;
    n += server_process_loopback_packet != 0; n += server_get_port != 0; n += log_level != 0; n += set_printf != 0;
    n += set_assert != 0; n += assert_hook != 0; n += random_bytes != 0; n += sleep_for != 0; n += time_now != 0;
    n += address.type + client_config.override_send_and_receive + server_config.max_connect_token_lifetime;
    return n;
}
