/**
 * Previews of rendered messages. Email HTML is the one place user content is shown as HTML, and
 * only inside an iframe with an empty `sandbox` attribute: no scripts, an opaque origin (no access
 * to this page, its storage or its token), no forms, no popups, no navigation of this page.
 */
export function EmailFrame(props: { html: string; title: string }) {
  return (
    <iframe
      className="email-frame"
      sandbox=""
      srcDoc={props.html}
      title={props.title}
      referrerPolicy="no-referrer"
    />
  );
}

/** An SMS as a phone would show it: text only. */
export function SmsPreview(props: { text: string }) {
  return (
    <div className="phone">
      <div className="bubble">{props.text}</div>
    </div>
  );
}

/** A push notification as a lock screen would show it. */
export function PushPreview(props: { title: string; body: string }) {
  return (
    <div className="push">
      <strong>{props.title}</strong>
      <div>{props.body}</div>
    </div>
  );
}

/**
 * An in-app message as `<herald-inbox>` lists it: the link is shown as text, never followed
 * from here.
 */
export function InappPreview(props: { title: string; body: string; url?: string }) {
  return (
    <div className="inapp">
      <strong>{props.title}</strong>
      <div>{props.body}</div>
      {props.url ? <div className="muted">{props.url}</div> : null}
    </div>
  );
}

/** Rendered content of any channel. */
export function ContentPreview(props: {
  channel: string;
  content: { subject?: string; text?: string; html?: string; title?: string; body?: string; url?: string };
}) {
  const { channel, content } = props;
  if (channel === 'sms') return <SmsPreview text={content.text ?? ''} />;
  if (channel === 'push') return <PushPreview title={content.title ?? ''} body={content.body ?? ''} />;
  if (channel === 'inapp')
    return <InappPreview title={content.title ?? ''} body={content.body ?? ''} url={content.url} />;
  return (
    <div className="email">
      <div className="email-subject">
        <span className="muted">Subject:</span> {content.subject ?? ''}
      </div>
      {content.html ? (
        <EmailFrame html={content.html} title={`Email: ${content.subject ?? ''}`} />
      ) : (
        <pre className="email-text">{content.text ?? ''}</pre>
      )}
    </div>
  );
}
