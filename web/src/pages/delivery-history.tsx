import { useQuery } from '@tanstack/react-query';
import { get } from '../api.ts';
import { ColumnChart, clockTime, type TimeBucket } from '../components/charts.tsx';
import { ProblemView } from '../components/problem.tsx';
import type { DeliveryHistory } from '../contract.ts';

/** The outcomes each column stacks, bottom up, in the order of `values` below. */
const SERIES = [
  { name: 'delivered', tone: 'tone-delivered' },
  { name: 'failed', tone: 'tone-failed' },
  { name: 'skipped', tone: 'tone-skipped' },
] as const;

const day = (at: number) => new Date(at).toLocaleDateString(undefined, { weekday: 'short', day: 'numeric' });

/** How each window reads: its heading, how often it is read again, and its axis. */
const WINDOWS = {
  '1h': {
    heading: 'Last hour',
    per: 'minute',
    pollMs: 10_000,
    // A label every quarter of an hour.
    tick: (b: TimeBucket) => (new Date(b.start).getMinutes() % 15 === 0 ? clockTime(b.start) : undefined),
    bucketLabel: (at: number) => clockTime(at),
    caption: 'time (1 column a minute)',
  },
  '7d': {
    heading: 'Last 7 days',
    per: 'hour',
    pollMs: 60_000,
    // A label at each midnight.
    tick: (b: TimeBucket) => (new Date(b.start).getHours() === 0 ? day(b.start) : undefined),
    bucketLabel: (at: number) => `${day(at)} ${clockTime(at)}`,
    caption: 'day (1 column an hour)',
  },
} as const;

/**
 * Delivered, failed and skipped per channel over one window (GET /admin/history): counted in the
 * database by every process that sends, so scale-out workers' deliveries show too.
 */
export function DeliveryHistoryCard(props: { window: keyof typeof WINDOWS }) {
  const spec = WINDOWS[props.window];
  const history = useQuery({
    queryKey: ['history', props.window],
    queryFn: () => get<DeliveryHistory>(`/admin/history?window=${props.window}`),
    refetchInterval: spec.pollMs,
  });
  return (
    <div className="card" data-testid={`history-${props.window}`}>
      <h2>{spec.heading}</h2>
      <ProblemView error={history.error} />
      {history.data?.channels.map(({ channel, buckets }) => (
        <ColumnChart
          key={channel}
          title={`${channel} in the ${spec.heading.toLowerCase()}: delivered, failed and skipped per ${spec.per}`}
          series={SERIES}
          buckets={buckets.map((b) => ({
            start: Date.parse(b.start),
            values: [b.delivered, b.failed, b.skipped],
          }))}
          ticks={spec.tick}
          bucketLabel={spec.bucketLabel}
          caption={`${channel}: ${spec.caption}`}
        />
      ))}
    </div>
  );
}
