import { CopyButton } from './copy-button.tsx';

/**
 * The curl command that trades a client's id and secret for an access token, through this
 * gateway (the port the UI is served from). Single quotes keep the shell from reading the
 * secret: it is base64url, which has none.
 */
export function tokenCommand(origin: string, id: string, secret: string): string {
  return `curl -s ${origin}/api/auth/token -u '${id}:${secret}' -d grant_type=client_credentials`;
}

/** A new client's secret, shown once: copy it, or copy the command that gets a token with it. */
export function ClientSecret(props: { id: string; secret: string }) {
  const command = tokenCommand(window.location.origin, props.id, props.secret);
  return (
    <div className="notice secret" data-testid="client-secret">
      <p>
        Secret of <code>{props.id}</code>, shown once: store it now.
      </p>
      <div className="copy-row">
        <code data-testid="secret-value">{props.secret}</code>
        <CopyButton text={props.secret} label="Copy the secret" />
      </div>
      <p className="muted">Get an access token with it (valid 10 minutes):</p>
      <div className="copy-row">
        <pre data-testid="token-command">{command}</pre>
        <CopyButton text={command} label="Copy the curl command" />
      </div>
    </div>
  );
}
