/*
 * An LD_PRELOAD shim for pmix-server's identity test: a process of another user that lies about
 * who it is. libpmix's "native" security module builds the credential it sends in the connect
 * handshake from geteuid()/getegid(), and the identity block from the same calls; with this shim
 * loaded both claim uid 0 / gid 0 (root) while the kernel still knows the real user. A server
 * that trusts the claimed credential on a TCP socket admits the impostor; ours must not.
 *
 * Build: gcc -shared -fPIC -o forge_root_ids.so forge_root_ids.c
 */
#include <sys/types.h>
#include <unistd.h>

uid_t getuid(void) { return 0; }
uid_t geteuid(void) { return 0; }
gid_t getgid(void) { return 0; }
gid_t getegid(void) { return 0; }
