import WebSocket from 'ws';

/**
 * Ends a running process's worker thread as a crash would: attaches through the process's
 * inspector (`--inspect`, its WebSocket URL `wsUrl`) to the thread whose script URL ends with
 * `script`, and calls process.exit(7) in it (which ends that thread only).
 */
export async function endThread(wsUrl: string, script: string): Promise<void> {
  const socket = new WebSocket(wsUrl);
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  try {
    const attached = new Promise<string>((resolve) => {
      socket.on('message', (data) => {
        const message = JSON.parse(String(data)) as {
          method?: string;
          params?: { sessionId: string; workerInfo: { url: string } };
        };
        if (
          message.method === 'NodeWorker.attachedToWorker' &&
          message.params?.workerInfo.url.endsWith(script)
        )
          resolve(message.params.sessionId);
      });
    });
    socket.send(
      JSON.stringify({ id: 1, method: 'NodeWorker.enable', params: { waitForDebuggerOnStart: false } }),
    );
    const sessionId = await attached;
    const evaluate = { id: 1, method: 'Runtime.evaluate', params: { expression: 'process.exit(7)' } };
    socket.send(
      JSON.stringify({
        id: 2,
        method: 'NodeWorker.sendMessageToWorker',
        params: { sessionId, message: JSON.stringify(evaluate) },
      }),
    );
  } finally {
    // The process is about to exit; the socket closes with it if not before.
    setTimeout(() => socket.terminate(), 2000).unref();
  }
}
