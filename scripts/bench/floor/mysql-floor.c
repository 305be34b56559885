/* The least a MySQL client can do per statement, to measure the floor under the client-CPU
 * targets: `clients` processes, each with one connection (a passwordless user, so the
 * handshake needs no hashing) sending COM_QUERY packets with one blocking send and reading
 * the OK packet with blocking recvs. Statements: mysqlslap's autoincrement write, a list of
 * 11 with random values cycled (its unique_query_number 10).
 * Usage: mysql-floor port user db queries clients        Exit: 0 ok, 1 a failure. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned char buf[1 << 16];

/* One whole packet into buf; returns its payload length. */
static int packet(int fd) {
  int got = 0, want = 4;
  while (got < want) {
    int r = recv(fd, buf + got, sizeof buf - got, 0);
    if (r <= 0) { perror("recv"); exit(1); }
    got += r;
    if (got >= 4) want = 4 + (buf[0] | buf[1] << 8 | buf[2] << 16);
  }
  if (got != want) { fprintf(stderr, "more than one packet\n"); exit(1); }
  return want - 4;
}

static void put(int fd, int seq, const unsigned char *p, int n) {
  static unsigned char out[1 << 12];
  out[0] = n; out[1] = n >> 8; out[2] = n >> 16; out[3] = seq;
  memcpy(out + 4, p, n);
  if (send(fd, out, n + 4, 0) != n + 4) { perror("send"); exit(1); }
}

static int client(int port, const char *user, const char *db, long n, unsigned seed) {
  int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  if (connect(fd, (void *)&a, sizeof a)) { perror("connect"); return 1; }
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  packet(fd); /* the greeting */
  unsigned char r[256] = {0};
  uint32_t caps = 0x1 | 0x8 | 0x200 | 0x2000 | 0x8000; /* long pw, with db, 4.1, trx, secure */
  memcpy(r, &caps, 4);
  uint32_t max = 1 << 24;
  memcpy(r + 4, &max, 4);
  r[8] = 45; /* utf8mb4 */
  int k = 32;
  k += sprintf((char *)r + k, "%s", user) + 1;
  r[k++] = 0; /* no auth data */
  k += sprintf((char *)r + k, "%s", db) + 1;
  put(fd, 1, r, k);
  packet(fd);
  if (buf[4] != 0) { fprintf(stderr, "login refused: %.*s\n", 200, buf + 7); return 1; }
  unsigned char q[11][512];
  int ql[11];
  for (int i = 0; i < 11; i++) {
    q[i][0] = 3; /* COM_QUERY */
    int l = sprintf((char *)q[i] + 1, "INSERT INTO t1 VALUES (NULL,%d,'", rand_r(&seed));
    for (int c = 0; c < 128; c++) q[i][1 + l++] = 'a' + rand_r(&seed) % 26;
    l += sprintf((char *)q[i] + 1 + l, "')");
    ql[i] = l + 1;
  }
  for (long i = 0; i < n; i++) {
    put(fd, 0, q[i % 11], ql[i % 11]);
    packet(fd);
    if (buf[4] != 0) { fprintf(stderr, "statement failed: %.*s\n", 200, buf + 13); return 1; }
  }
  unsigned char quit = 1;
  put(fd, 0, &quit, 1);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 6) { fprintf(stderr, "usage: mysql-floor port user db queries clients\n"); return 1; }
  int port = atoi(argv[1]), clients = atoi(argv[5]);
  long n = atol(argv[4]);
  for (int c = 0; c < clients; c++)
    if (fork() == 0) _exit(client(port, argv[2], argv[3], n / clients, 1234 + c));
  int st, bad = 0;
  while (wait(&st) > 0) bad |= !WIFEXITED(st) || WEXITSTATUS(st);
  return bad;
}
