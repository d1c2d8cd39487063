import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { mutate, ProblemError } from '../api.ts';
import { ChannelSelect } from '../components/channel-select.tsx';
import { fieldErrors, ProblemView } from '../components/problem.tsx';
import { type Channel, PRIORITIES } from '../contract.ts';
import { navigate } from '../router.tsx';

function FieldMessages(props: { error: unknown; field: string }) {
  const messages = fieldErrors(props.error, props.field);
  if (messages.length === 0) return null;
  return (
    <span className="field-error">
      {messages.map((m) => (
        <span key={m}>{m} </span>
      ))}
    </span>
  );
}

/** A JSON field of the form, parsed; `undefined` when empty; a 400-like problem naming `path` when not JSON. */
function jsonField(text: string | undefined, path: string, what: string): unknown {
  if (!text?.trim()) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new ProblemError({
      status: 400,
      title: `${what} is not JSON`,
      errors: [{ path, message: 'must be a JSON object' }],
    });
  }
}

/** The recipient for the channel: an address, or for `inapp` a recipient's ID (its only form). */
function recipientOf(form: Record<string, string>, channel: Channel) {
  switch (channel) {
    case 'email':
      return { email: form.email };
    case 'sms':
      return { phone: form.phone };
    case 'push':
      return { deviceToken: form.deviceToken, platform: form.platform || 'fcm' };
    case 'inapp':
      return { id: form.recipientId };
  }
}

/** The inline content for the channel. */
function contentOf(form: Record<string, string>, channel: Channel) {
  switch (channel) {
    case 'email':
      return { subject: form.subject, text: form.text || undefined, html: form.html || undefined };
    case 'sms':
      return { text: form.text };
    case 'push':
      return { title: form.title, body: form.body };
    case 'inapp':
      return {
        title: form.title,
        body: form.body,
        url: form.url || undefined,
        data: jsonField(form.data, 'body/content/data', 'Data'),
      };
  }
}

/** The POST /notifications body from the form's fields. Variables must be a JSON object. */
function buildBody(form: Record<string, string>, channel: Channel, useTemplate: boolean) {
  const variables = jsonField(form.variables, 'body/variables', 'Variables') ?? {};
  const recipient = recipientOf(form, channel);
  const content = contentOf(form, channel);
  return {
    channel,
    priority: form.priority || 'NORMAL',
    recipient,
    ...(useTemplate ? { template: form.template } : { content }),
    variables,
  };
}

export function SendPage() {
  const [channel, setChannel] = useState<Channel>('email');
  const [useTemplate, setUseTemplate] = useState(false);
  const [form, setForm] = useState<Record<string, string>>({ priority: 'NORMAL', platform: 'fcm' });
  const set = (name: string) => (e: { target: { value: string } }) =>
    setForm({ ...form, [name]: e.target.value });
  const send = useMutation({
    mutationFn: async () =>
      mutate<{ notificationId: string }>('POST', '/notifications', buildBody(form, channel, useTemplate)),
    onSuccess: (data) => navigate(`/notifications/${encodeURIComponent(data.notificationId)}`),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    send.mutate();
  };
  const err = send.error;
  const input = (name: string, label: string, props: { type?: string; placeholder?: string } = {}) => (
    <label>
      {label}
      <input name={name} value={form[name] ?? ''} onChange={set(name)} {...props} />
      <FieldMessages
        error={err}
        field={name === 'email' || name === 'phone' || name === 'recipientId' ? 'recipient' : name}
      />
    </label>
  );
  const area = (name: string, label: string, rows: number, placeholder?: string) => (
    <label>
      {label}
      <textarea
        name={name}
        rows={rows}
        value={form[name] ?? ''}
        placeholder={placeholder}
        onChange={set(name)}
      />
      <FieldMessages error={err} field={name} />
    </label>
  );

  return (
    <section>
      <h1>Send a notification</h1>
      <form onSubmit={submit} className="card form">
        <div className="row">
          <ChannelSelect name="channel" value={channel} onChange={(value) => setChannel(value as Channel)} />
          <label>
            Priority
            <select name="priority" value={form.priority} onChange={set('priority')}>
              {PRIORITIES.map((p) => (
                <option key={p}>{p}</option>
              ))}
            </select>
            <FieldMessages error={err} field="priority" />
          </label>
        </div>
        {channel === 'email' ? input('email', 'Recipient email', { placeholder: 'ada@example.com' }) : null}
        {channel === 'sms'
          ? input('phone', 'Recipient phone (E.164)', { placeholder: '+15551234567' })
          : null}
        {channel === 'push' ? (
          <div className="row">
            {input('deviceToken', 'Device token')}
            <label>
              Platform
              <select name="platform" value={form.platform} onChange={set('platform')}>
                <option>fcm</option>
                <option>apns</option>
              </select>
            </label>
          </div>
        ) : null}
        {channel === 'push' ? <FieldMessages error={err} field="recipient" /> : null}
        {channel === 'inapp' ? input('recipientId', 'Recipient ID', { placeholder: 'user-1842' }) : null}
        <fieldset>
          <legend>Content</legend>
          <label className="inline">
            <input type="radio" name="mode" checked={!useTemplate} onChange={() => setUseTemplate(false)} />{' '}
            Inline
          </label>
          <label className="inline">
            <input type="radio" name="mode" checked={useTemplate} onChange={() => setUseTemplate(true)} />{' '}
            Template
          </label>
          {useTemplate ? input('template', 'Template key') : null}
          {!useTemplate && channel === 'email' ? (
            <>
              {input('subject', 'Subject')}
              {input('text', 'Text')}
              {area('html', 'HTML', 4)}
            </>
          ) : null}
          {!useTemplate && channel === 'sms' ? input('text', 'Text') : null}
          {!useTemplate && (channel === 'push' || channel === 'inapp') ? (
            <>
              {input('title', 'Title')}
              {input('body', 'Body')}
            </>
          ) : null}
          {!useTemplate && channel === 'inapp' ? (
            <>
              {input('url', 'Link (URL)', { placeholder: 'https://app.example.com/orders/1042' })}
              {area('data', 'Data (JSON)', 2, '{"orderId": 1042}')}
            </>
          ) : null}
          <FieldMessages error={err} field="content" />
        </fieldset>
        {area('variables', 'Variables (JSON)', 3, '{"name": "Ada"}')}
        <button type="submit" disabled={send.isPending}>
          Send
        </button>
        <ProblemView error={err} />
      </form>
    </section>
  );
}
