// A process for test/cli/lock.test.ts: waits until the time given, then tries to take the lock `file`. Inside,
// it creates `marker` exclusively (finding it there means another racer is inside at the same moment), holds
// the lock `hold` ms, and removes the marker. Prints one word: `in`, `overlap` or `refused`; with hold < 0 it
// prints `held` once inside and holds the lock until it is killed.
import fs from 'node:fs';
import { withLock } from '../../pipeline/lock.ts';

const [file, marker, goAt, hold] = [
  process.argv[2]!,
  process.argv[3]!,
  Number(process.argv[4]),
  Number(process.argv[5]),
];
// Asleep until 20 ms before the time (six racers spinning for most of a second each round cost the suite ~40 s of
// CPU on two cores), then spinning, so that they all try within a millisecond or two of each other.
const sleep = (ms: number): void => void Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Math.max(0, ms));
sleep(goAt - 20 - Date.now());
while (Date.now() < goAt);
try {
  withLock(
    file,
    () => {
      let overlap = false;
      try {
        fs.writeFileSync(marker, String(process.pid), { flag: 'wx' });
      } catch {
        overlap = true;
      }
      if (hold < 0) {
        process.stdout.write('held\n');
        setInterval(() => {}, 1000);
        sleep(Infinity);
      }
      sleep(hold);
      if (!overlap) fs.rmSync(marker);
      process.stdout.write(overlap ? 'overlap\n' : 'in\n');
    },
    'test racer',
  );
} catch (err) {
  process.stdout.write(
    /another test racer holds .* \(pid [0-9?]+\); try again when it ends/.test((err as Error).message)
      ? 'refused\n'
      : `error ${(err as Error).message}\n`,
  );
}
