// What tests need to run real servers from Debian's packages (PostgreSQL, nginx) beside themselves: a free
// loopback port, and a way to make sure such a server never outlives the test process.
import fs from 'node:fs';
import net from 'node:net';

/** A free TCP port on 127.0.0.1. It is free when this returns; a server that loses it to another process in
 * the meantime fails to bind (startPostgres then tries another port). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * A command prefix that makes the kernel send `signal` to the server when this process dies, however it dies
 * (a test worker killed by its runner never reaches an 'exit' handler): util-linux's setpriv sets the
 * parent-death signal and execs the server, which keeps the pid. Empty where setpriv is missing.
 */
export function parentDeathSignal(signal: 'INT' | 'TERM' | 'QUIT'): string[] {
  const setpriv = '/usr/bin/setpriv';
  return fs.existsSync(setpriv) ? [setpriv, `--pdeathsig=${signal}`, '--'] : [];
}
