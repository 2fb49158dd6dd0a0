// Prometheus metrics of a `timeseal serve` node (prom-client, the Prometheus text format), for operators: HTTP
// answers by route and status, the submission queue, the archive's last day, anchoring lag, the schedule's steps
// (build, anchor, witnesses, RFC 3161 stamping; their outcomes and durations), and Node's process metrics.
// Served by `serve` on a separate address only when METRICS_LISTEN is set (cli/serve.ts); docs/OPERATIONS.md
// "Metrics" lists them with the alerts worth setting. Every archive figure is read at scrape time from the
// archive view's cached state (archive-view.ts): a scrape costs the same whatever the archive's age.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { FastifyInstance } from 'fastify';
import type { ArchiveView } from './archive-view.ts';
import type { Store } from '../store/store.ts';
import type { Clock } from '../runtime/clock.ts';

export interface Metrics {
  registry: Registry;
  /** Counts every answer of `app` by method, route pattern and status, with its duration. */
  observe(app: FastifyInstance): void;
  /** A scheduled step ended (pipeline/schedule.ts). */
  stepFinished(step: string, ok: boolean, seconds: number): void;
  /** What the last build published (its `ledger build --json` report). */
  buildFinished(report: { days: number; entries: number; seconds: number }): void;
}

const DAY_MS = 86_400_000;
/** When day D is published: 00:01 UTC the next day (ms). */
const publishedAt = (date: string): number => Date.parse(`${date}T00:01:00.000Z`) + DAY_MS;

export function createMetrics(source: { store: Store; archive: ArchiveView; clock: Clock }): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'timeseal_' });
  const requests = new Counter({
    name: 'timeseal_http_requests_total',
    help: 'HTTP answers by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'timeseal_http_request_duration_seconds',
    help: 'Time to answer, by route pattern.',
    labelNames: ['route'] as const,
    buckets: [0.001, 0.005, 0.02, 0.1, 0.5, 2, 10],
    registers: [registry],
  });
  const days = () => source.archive.days();
  new Gauge({
    name: 'timeseal_queue_size',
    help: 'Submissions stored and not yet in a published ledger.',
    registers: [registry],
    async collect() {
      this.set(await source.store.submissions.queueSize(days().at(-1)?.date ?? ''));
    },
  });
  new Gauge({
    name: 'timeseal_published_days',
    help: 'Days published in the archive.',
    registers: [registry],
    collect() {
      this.set(days().length);
    },
  });
  new Gauge({
    name: 'timeseal_tree_size',
    help: 'Leaves of the log after the last published day.',
    registers: [registry],
    collect() {
      this.set(days().at(-1)?.treeSize ?? 0);
    },
  });
  new Gauge({
    name: 'timeseal_last_published_day_timestamp_seconds',
    help: 'Publication time (00:01 UTC the next day) of the last published day; 0 when none.',
    registers: [registry],
    collect() {
      const last = days().at(-1);
      this.set(last ? publishedAt(last.date) / 1000 : 0);
    },
  });
  // Days after ots_status.json's latest_ots_ok are not anchored yet: found by a binary search in the ascending list.
  const unanchored = (): { count: number; oldest?: string } => {
    const list = days();
    const latest = source.archive.otsStatus()?.latest_ots_ok ?? '';
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (list[mid]!.date <= latest) lo = mid + 1;
      else hi = mid;
    }
    const oldest = list[lo]?.date;
    return { count: list.length - lo, ...(oldest === undefined ? {} : { oldest }) };
  };
  new Gauge({
    name: 'timeseal_unanchored_days',
    help: 'Published days whose Bitcoin anchoring is not confirmed yet.',
    registers: [registry],
    collect() {
      this.set(unanchored().count);
    },
  });
  new Gauge({
    name: 'timeseal_anchoring_lag_seconds',
    help: 'Since the publication of the oldest day not anchored yet; 0 when every day is anchored.',
    registers: [registry],
    collect() {
      const { oldest } = unanchored();
      this.set(oldest === undefined ? 0 : Math.max(0, (source.clock().getTime() - publishedAt(oldest)) / 1000));
    },
  });
  const steps = new Counter({
    name: 'timeseal_schedule_steps_total',
    help: 'Scheduled steps run, by step and outcome (ok, failed).',
    labelNames: ['step', 'outcome'] as const,
    registers: [registry],
  });
  const stepSeconds = new Gauge({
    name: 'timeseal_schedule_step_seconds',
    help: "The last run's duration, by step.",
    labelNames: ['step'] as const,
    registers: [registry],
  });
  const stepTime = new Gauge({
    name: 'timeseal_schedule_step_timestamp_seconds',
    help: 'When each step last ended, by step and outcome.',
    labelNames: ['step', 'outcome'] as const,
    registers: [registry],
  });
  const build = new Gauge({
    name: 'timeseal_last_build',
    help: 'The last build that published days: days, entries and seconds.',
    labelNames: ['field'] as const,
    registers: [registry],
  });

  return {
    registry,
    observe(app) {
      app.addHook('onResponse', (request, reply, done) => {
        const route = request.routeOptions.url ?? '(none)';
        requests.inc({ method: request.method, route, status: String(reply.statusCode) });
        duration.observe({ route }, reply.elapsedTime / 1000);
        done();
      });
    },
    stepFinished(step, ok, seconds) {
      const outcome = ok ? 'ok' : 'failed';
      steps.inc({ step, outcome });
      stepSeconds.set({ step }, seconds);
      stepTime.set({ step, outcome }, source.clock().getTime() / 1000);
    },
    buildFinished(report) {
      build.set({ field: 'days' }, report.days);
      build.set({ field: 'entries' }, report.entries);
      build.set({ field: 'seconds' }, report.seconds);
    },
  };
}
