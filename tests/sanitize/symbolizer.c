/* llvm-symbolizer for ThreadSanitizer runs, linked statically: a test's LD_PRELOAD holds a
 * libampio.so built with ThreadSanitizer, whose runtime only the test programs carry, and no
 * dynamically linked program (a shell script's shell included) starts with it. The preload is
 * dropped before the real symbolizer starts. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    (void)argc;
    unsetenv("LD_PRELOAD");
    argv[0] = "llvm-symbolizer-14";
    execvp(argv[0], argv);
    perror("llvm-symbolizer-14");
    return 127;
}
