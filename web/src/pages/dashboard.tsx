import { useQuery } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { get } from '../api.ts';
import { BarChart, LineChart } from '../components/charts.tsx';
import { ProblemView } from '../components/problem.tsx';
import { PRIORITIES, type QueueRow, type StatusChange } from '../contract.ts';
import { parsePrometheus, type Sample, sum } from '../prometheus.ts';
import { Link } from '../router.tsx';
import { sessionIsOperator } from '../session.ts';
import { useStatusStream } from '../stream.ts';
import { DeliveryHistoryCard } from './delivery-history.tsx';

const POLL_MS = 2000;
const HISTORY = 60;

interface Point {
  at: number;
  accepted: number;
  delivered: number;
  latency: Record<string, { sum: number; count: number }>;
}

function point(samples: Sample[]): Point {
  const latency: Point['latency'] = {};
  for (const p of PRIORITIES) {
    latency[p] = {
      sum: sum(samples, 'herald_pickup_latency_seconds_sum', { priority: p }),
      count: sum(samples, 'herald_pickup_latency_seconds_count', { priority: p }),
    };
  }
  return {
    at: Date.now(),
    accepted: sum(samples, 'herald_notifications_accepted_total'),
    delivered:
      sum(samples, 'herald_delivery_outcomes_total', { outcome: 'sent' }) +
      sum(samples, 'herald_delivery_outcomes_total', { outcome: 'delivered' }),
    latency,
  };
}

/** Per-second rates between consecutive samples. */
function rates(points: Point[], pick: (p: Point) => number): number[] {
  return points.slice(1).map((p, i) => {
    const prev = points[i] as Point;
    return Math.max(0, (pick(p) - pick(prev)) / Math.max(0.001, (p.at - prev.at) / 1000));
  });
}

const ageFormat = (ms: number) =>
  ms >= 60_000 ? `${(ms / 60_000).toFixed(1)} min` : `${(ms / 1000).toFixed(1)} s`;

/** Status changes the dashboard lists. */
const RECENT = 12;

export function DashboardPage() {
  // The process metrics count every tenant's traffic, so the API gives them to operators only;
  // the queue charts count the caller's tenant's notifications (all of them for operators).
  const operator = sessionIsOperator();
  const queues = useQuery({
    queryKey: ['queues'],
    queryFn: () => get<{ queues: QueueRow[] }>('/admin/queues'),
    refetchInterval: POLL_MS,
  });
  const metrics = useQuery({
    queryKey: ['metrics'],
    queryFn: () => get<string>('/metrics/cluster'),
    refetchInterval: POLL_MS,
    enabled: operator,
  });
  const [history, setHistory] = useState<Point[]>([]);
  const seen = useRef<string | undefined>(undefined);
  useEffect(() => {
    if (metrics.data === undefined || metrics.data === seen.current) return;
    seen.current = metrics.data;
    const next = point(parsePrometheus(metrics.data));
    setHistory((h) => [...h, next].slice(-HISTORY));
  }, [metrics.data]);

  // The latest status changes of the tenant, from the live stream (not polled).
  const [recent, setRecent] = useState<StatusChange[]>([]);
  const live = useStatusStream((change) => setRecent((r) => [change, ...r].slice(0, RECENT)));

  const rows = queues.data?.queues ?? [];
  // Scheduled work (a later scheduledAt, a retry's backoff) is not waiting: it is shown apart,
  // and the oldest age counts only what is due now.
  const depthBars = rows.map((q) => ({
    label: `${q.priority} ${q.channel}${q.paused ? ' (paused)' : ''}`,
    value: q.depth - q.scheduled,
    tone: `tone-${q.channel}`,
  }));
  const scheduledBars = rows.map((q) => ({
    label: `${q.priority} ${q.channel}`,
    value: q.scheduled,
    tone: `tone-${q.channel}`,
  }));
  const ageBars = rows.map((q) => ({
    label: `${q.priority} ${q.channel}`,
    value: q.oldestDueAgeMs ?? 0,
    tone: `tone-${q.channel}`,
  }));
  const last = history.at(-1);
  const first = history[0];
  const latencyBars = PRIORITIES.map((p) => {
    const now = last?.latency[p];
    const then = first?.latency[p];
    const count = (now?.count ?? 0) - (history.length > 1 ? (then?.count ?? 0) : 0);
    const total = (now?.sum ?? 0) - (history.length > 1 ? (then?.sum ?? 0) : 0);
    const avg = count > 0 ? total / count : now && now.count > 0 ? now.sum / now.count : 0;
    return { label: p, value: avg * 1000, tone: `tone-${p.toLowerCase()}` };
  });

  return (
    <section>
      <h1>Dashboard</h1>
      <p className="muted">
        Charts refreshed every {POLL_MS / 1000} s; status changes {live ? 'live' : 'reconnecting…'}.
        {operator ? '' : " The queues count your tenant's notifications."}
      </p>
      <ProblemView error={queues.error ?? metrics.error} />
      <div className="grid">
        <div className="card">
          <h2>Due now</h2>
          <BarChart title="Notifications due now per priority and channel" bars={depthBars} />
        </div>
        <div className="card">
          <h2>Oldest waiting</h2>
          <BarChart title="Age of the oldest notification due now" bars={ageBars} format={ageFormat} />
        </div>
        <div className="card">
          <h2>Scheduled</h2>
          <BarChart title="Notifications scheduled for later (or backing off)" bars={scheduledBars} />
        </div>
        {operator ? (
          <>
            <div className="card">
              <h2>Throughput</h2>
              <LineChart
                title="Accepted and delivered per second"
                unit="/s"
                times={history.slice(1).map((p) => p.at)}
                series={[
                  { name: 'accepted', tone: 'tone-a', points: rates(history, (p) => p.accepted) },
                  { name: 'sent/delivered', tone: 'tone-b', points: rates(history, (p) => p.delivered) },
                ]}
              />
            </div>
            <div className="card">
              <h2>Latency per priority</h2>
              <BarChart
                title="Average time from acceptance to provider call"
                bars={latencyBars}
                format={(v) => `${v.toFixed(v < 10 ? 1 : 0)} ms`}
              />
            </div>
          </>
        ) : null}
        <DeliveryHistoryCard window="1h" />
        <DeliveryHistoryCard window="7d" />
        <div className="card">
          <h2>Status changes</h2>
          <ol className="timeline" data-testid="recent-changes">
            {recent.map((c) => (
              <li
                key={`${c.notificationId}-${c.status}-${c.event.at}`}
                className={`event event-${c.status.toLowerCase()}`}
              >
                <span className="event-type">{c.status}</span>
                <time>{new Date(c.event.at).toLocaleTimeString(undefined, { hour12: false })}</time>
                <Link to={`/notifications/${c.notificationId}`}>{c.notificationId.slice(-8)}</Link>
              </li>
            ))}
          </ol>
          {recent.length === 0 ? <p className="muted">None since this page opened.</p> : null}
        </div>
      </div>
    </section>
  );
}
