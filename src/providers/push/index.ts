import type { Provider, ProviderDeps } from '../types.ts';
import { createApnsProvider } from './apns.ts';
import { createFcmProvider } from './fcm.ts';
import { createWebPushProvider } from './webpush.ts';

export { createApnsProvider } from './apns.ts';
export type { PushProviderOptions } from './common.ts';
export { createFcmProvider } from './fcm.ts';
export { createWebPushProvider } from './webpush.ts';

/**
 * The push providers as registry factories: each is built only when its variables are set.
 * They split the push channel by recipient shape (`accepts`), so their order does not matter.
 */
export const pushProviderFactories: ((deps: ProviderDeps) => Provider | undefined)[] = [
  (deps) => {
    const vapid = deps.config.providers.vapid;
    return vapid ? createWebPushProvider(vapid, deps) : undefined;
  },
  (deps) => {
    const apns = deps.config.providers.apns;
    return apns ? createApnsProvider(apns, deps) : undefined;
  },
  (deps) => {
    const fcm = deps.config.providers.fcm;
    return fcm ? createFcmProvider(fcm, deps) : undefined;
  },
];
