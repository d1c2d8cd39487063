// A second reporter for scripts/run-tests.mjs: after the TAP stream, it repeats the failed tests
// (file, name and the first lines of the error) so that they are in the last lines of a run's
// output, the part a CI log shows.
export default async function* failures(source) {
  const failed = [];
  for await (const event of source) {
    if (event.type !== 'test:fail') continue;
    const error = event.data.details?.error;
    // A suite fails because a test in it did: that test is listed itself.
    if (error?.failureType === 'subtestsFailed') continue;
    const message = String(error?.cause?.message ?? error?.message ?? error);
    failed.push(
      `${event.data.file ?? ''}: ${event.data.name}\n${message.split('\n').slice(0, 8).join('\n')}`,
    );
  }
  if (failed.length === 0) return;
  yield `\n# ${failed.length} failed:\n`;
  for (const entry of failed) yield `#  - ${entry.replaceAll('\n', '\n#      ')}\n`;
}
