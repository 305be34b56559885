/* The least a Redis client can do per request, to measure the floor under the client-CPU
 * targets: one connection, one blocking send and one blocking recv per request (GET or SET
 * of redis-benchmark's key:%012d over 100,000 keys, 3-byte values), TCP_NODELAY.
 * Usage: redis-floor port password requests get|set        Exit: 0 ok, 1 a failure. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
int main(int argc, char **argv) {
  if (argc != 5) { fprintf(stderr, "usage: redis-floor port password requests get|set\n"); return 1; }
  int port = atoi(argv[1]); const char *pw = argv[2]; long n = atol(argv[3]); int set = !strcmp(argv[4], "set");
  int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  if (connect(fd, (void *)&a, sizeof a)) { perror("connect"); return 1; }
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  char buf[65536], cmd[256];
  int l = snprintf(cmd, sizeof cmd, "*2\r\n$4\r\nAUTH\r\n$%zu\r\n%s\r\n", strlen(pw), pw);
  send(fd, cmd, l, 0);
  if (recv(fd, buf, sizeof buf, 0) < 3 || buf[0] != '+') { fprintf(stderr, "AUTH refused\n"); return 1; }
  unsigned s = 12345;
  for (long i = 0; i < n; i++) {
    s = s * 1103515245 + 12345;
    int k = (s >> 8) % 100000;
    l = set ? snprintf(cmd, sizeof cmd, "*3\r\n$3\r\nSET\r\n$16\r\nkey:%012d\r\n$3\r\nxxx\r\n", k)
            : snprintf(cmd, sizeof cmd, "*2\r\n$3\r\nGET\r\n$16\r\nkey:%012d\r\n", k);
    if (send(fd, cmd, l, 0) != l) { perror("send"); return 1; }
    /* Every reply here ends with \r\n and fits one segment; read until it does. */
    int got = 0;
    do { int r = recv(fd, buf + got, sizeof buf - got, 0); if (r <= 0) { perror("recv"); return 1; } got += r; }
    while (got < 2 || buf[got - 2] != '\r' || (buf[0] == '$' && buf[1] != '-' && got < 8));
  }
  return 0;
}
