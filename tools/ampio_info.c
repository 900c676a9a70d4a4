/* ampio-info: prints every ampio parameter with the value in effect and its source.
 *
 *   ampio-info [key=value ...]                the values a file opened with these hints gets
 *   ampio-info --file PATH [key=value ...]    the same for PATH's file system, and its layout */
#include <ampio.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Info hints;
    MPI_Info_create(&hints);
    const char *file = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--file") == 0 && i + 1 < argc) {
            file = argv[++i];
            continue;
        }
        char *eq = strchr(argv[i], '=');
        if (!eq) {
            fprintf(stderr, "usage: ampio-info [--file PATH] [key=value ...]\n");
            MPI_Finalize();
            return 2;
        }
        *eq = '\0';
        MPI_Info_set(hints, argv[i], eq + 1);
    }
    printf("ampio %s, built for %s\n", ampio_version(), ampio_mpi_family());
    int rc = ampio_print_file_config(stdout, file, hints);
    if (rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(rc, text, &len);
        fprintf(stderr, "ampio-info: %s\n", text);
    }
    MPI_Info_free(&hints);
    MPI_Finalize();
    return rc == MPI_SUCCESS ? 0 : 1;
}
