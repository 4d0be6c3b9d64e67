/*
    Prints a UDP port that was free a moment ago on 127.0.0.1 (run.sh
    gives it to programs that take a fixed address).
*/

#include "common.h"

int main( void )
{
    int port = free_udp_port( 0 );
    if ( port == 0 )
        return 1;
    printf( "%d\n", port );
    return 0;
}
