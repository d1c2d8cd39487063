import { HeraldError } from '../errors.ts';
import { Turns } from '../turns.ts';
import { throttleKey } from './client-address.ts';
import type { Principal } from './principal.ts';

/**
 * Whose argon2 work a job is: the tenant whose share it spends and, within it, the caller. Jobs
 * wait in turns: tenants take turns, and within a tenant its callers do (turns.ts), so a tenant
 * flooding the gate delays another tenant's next job by at most one of its own.
 */
export interface GateTurn {
  tenant: string;
  caller: string;
}

/**
 * The share of work nobody has signed in for yet (logins, `/auth/token` with a legacy argon2
 * secret). Not a tenant name (TENANT_NAME needs a first letter or digit), so never a tenant's.
 */
const ANONYMOUS = '(anonymous)';

/** The turn of a signed-in caller's work (a password change, a user created by an admin). */
export function principalTurn(principal: Principal): GateTurn {
  return { tenant: principal.tenant, caller: principal.sub };
}

/**
 * The turn of a login, before anyone is known. Not the tenant of the user the email names: that
 * would make a known email's login wait differently from an unknown one's, and so tell which
 * emails are users. Not a tenant the login names either: that is a claim, not an identity, and
 * would let anyone fill a tenant's share with logins naming it and so refuse the tenant's own
 * admins. Every login spends one share apart from every tenant's, which takes its turns with
 * theirs; within it callers are client addresses (an IPv6 one as its /64, as throttling counts
 * them), which a caller cannot vary as freely as the email it types.
 */
export function loginTurn(address: string): GateTurn {
  return { tenant: ANONYMOUS, caller: throttleKey(address) };
}

/**
 * The turn of this process's own work (the bootstrap admin, the CLI), in the tenant it acts on:
 * what createUser hashes as when it is given no caller's turn.
 */
export function localTurn(tenant: string): GateTurn {
  return { tenant, caller: '(this process)' };
}

export interface GateLimits {
  /** Jobs running at once. */
  running: number;
  /** Jobs waiting, all tenants': bounds memory when many tenants flood at once. */
  waiting: number;
  /** Jobs of one tenant waiting: past it, that tenant gets 503 and the others still get in. */
  waitingPerTenant: number;
  /** Jobs of one caller waiting: past it, that caller gets 503 and its tenant's others still get in. */
  waitingPerCaller: number;
}

/** What a gate has done and holds, for metrics and for tests that watch a job's turn. */
export interface GateStats {
  /** Jobs started since the gate was made (the herald_argon2_operations_total metric). */
  started: number;
  /** Jobs waiting for a slot: all tenants', or the tenant's asked for. */
  waiting: number;
}

interface Tenant {
  callers: Turns<() => void>;
  /** Jobs waiting per caller, for the caller's limit. */
  perCaller: Map<string, number>;
}

/**
 * Runs at most `running` jobs at once; the rest wait in turns (see GateTurn), each tenant and
 * each caller with a bounded number waiting. A job past a limit is refused at once with 503
 * and Retry-After rather than queued without bound. Only its own tenant's (or caller's) jobs
 * count towards a limit, so one tenant's flood is refused to that tenant alone.
 */
export class FairGate {
  readonly #limits: GateLimits;
  #running = 0;
  #started = 0;
  /** One entry per waiting job, owned by its tenant: whose turn is next. */
  readonly #turns = new Turns<string>();
  readonly #tenants = new Map<string, Tenant>();

  constructor(limits: GateLimits) {
    this.#limits = limits;
  }

  /** Jobs started so far, and jobs waiting: all tenants' (or `tenant`'s). */
  stats(tenant?: string): GateStats {
    const waiting = tenant === undefined ? this.#turns.size : (this.#tenants.get(tenant)?.callers.size ?? 0);
    return { started: this.#started, waiting };
  }

  async run<T>(turn: GateTurn, work: () => Promise<T>): Promise<T> {
    // Nothing waits while a slot is free: a release hands its slot to the next in turn.
    if (this.#running < this.#limits.running) this.#running++;
    else await this.#wait(turn);
    try {
      this.#started++;
      return await work();
    } finally {
      this.#release();
    }
  }

  #wait(turn: GateTurn): Promise<void> {
    const tenant = this.#tenants.get(turn.tenant) ?? { callers: new Turns(), perCaller: new Map() };
    const ofCaller = tenant.perCaller.get(turn.caller) ?? 0;
    if (
      this.#turns.size >= this.#limits.waiting ||
      tenant.callers.size >= this.#limits.waitingPerTenant ||
      ofCaller >= this.#limits.waitingPerCaller
    ) {
      throw new HeraldError('UNAVAILABLE', 'Too many password checks at once; try again shortly.', {
        retryAfterS: 1,
      });
    }
    this.#tenants.set(turn.tenant, tenant);
    tenant.perCaller.set(turn.caller, ofCaller + 1);
    this.#turns.push(turn.tenant, turn.tenant);
    return new Promise<void>((resolve) =>
      tenant.callers.push(turn.caller, () => {
        const left = (tenant.perCaller.get(turn.caller) ?? 1) - 1;
        if (left > 0) tenant.perCaller.set(turn.caller, left);
        else tenant.perCaller.delete(turn.caller);
        resolve();
      }),
    );
  }

  /** Hands the slot to the next job in turn (`running` stays), or frees it. */
  #release(): void {
    const name = this.#turns.shift();
    const tenant = name === undefined ? undefined : this.#tenants.get(name);
    const next = tenant?.callers.shift();
    if (!next) {
      this.#running--;
      return;
    }
    if (tenant && tenant.callers.size === 0) this.#tenants.delete(name as string);
    next();
  }
}
