import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { mutate } from '../api.ts';
import { fieldErrors, ProblemView } from '../components/problem.tsx';
import { useSignOut } from '../components/sign-out.tsx';

/**
 * The signed-in user's own account: change the password, or sign out everywhere. Either ends
 * every session of the user (this one too), so both come back to the login page.
 */
export function AccountPage() {
  const [form, setForm] = useState({ currentPassword: '', newPassword: '' });
  const { everywhere, leave } = useSignOut();
  const change = useMutation({
    mutationFn: () => mutate<void>('POST', '/auth/password', form),
    // The password page says itself that every session ends.
    onSuccess: () => leave(),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    change.mutate();
  };
  const set = (k: keyof typeof form) => (e: { target: { value: string } }) =>
    setForm({ ...form, [k]: e.target.value });
  return (
    <>
      <div className="card">
        <h2>Change password</h2>
        <p>
          At least 12 characters, and not a common password, one character over and over or a run like
          123456789012. Every session ends, this one too: you sign in again after.
        </p>
        <form onSubmit={submit} className="row">
          <label>
            Current password
            <input
              type="password"
              name="currentPassword"
              autoComplete="current-password"
              value={form.currentPassword}
              onChange={set('currentPassword')}
            />
          </label>
          <label>
            New password
            <input
              type="password"
              name="newPassword"
              autoComplete="new-password"
              value={form.newPassword}
              onChange={set('newPassword')}
            />
            {fieldErrors(change.error, 'newPassword').map((m) => (
              <span key={m} className="field-error">
                {m}
              </span>
            ))}
          </label>
          <button type="submit">Change password</button>
        </form>
        <ProblemView error={change.error} />
      </div>
      <div className="card">
        <h2>Sign out everywhere</h2>
        <p>Ends every session of yours, on every device; each has to sign in again.</p>
        <button type="button" className="secondary" onClick={() => everywhere.mutate()}>
          Sign out everywhere
        </button>
        <ProblemView error={everywhere.error} />
      </div>
    </>
  );
}
