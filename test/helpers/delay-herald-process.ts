// `npm start` on a fresh SQLite directory (the workflow engine on its dispatch thread), signed in,
// with recipients and a workflow `later` of one hour's delay: the set-up of the workflow tests that
// need the real process (a kill -9, the engine's own turns).
import assert from 'node:assert/strict';
import { apiCall } from './api-call.ts';
import { tempDir } from './config.ts';
import { type HeraldProcess, oneProcessEnv, passwordLogin, startHeraldProcess } from './herald-process.ts';

export interface DelayHerald {
  herald: HeraldProcess;
  dataDir: string;
  base: string;
  token: string;
}

export async function startDelayHerald(
  name: string,
  admin: { email: string; password: string },
  people: string[],
): Promise<DelayHerald> {
  const dataDir = tempDir(`herald-${name}-`);
  const herald = await startHeraldProcess(name, oneProcessEnv(dataDir, admin));
  const base = herald.apiUrl as string;
  const token = await passwordLogin(base, admin);
  for (const id of people)
    assert.equal((await apiCall(base, token, 'PUT', `/recipients/${id}`, {})).status, 201);
  const saved = await apiCall(base, token, 'PUT', '/workflows/later', {
    steps: [{ type: 'delay', for: 'PT1H' }],
  });
  assert.equal(saved.status, 201, JSON.stringify(saved.json));
  return { herald, dataDir, base, token };
}
