import { useMutation, useQueryClient } from '@tanstack/react-query';
import { mutate } from '../api.ts';
import { navigate } from '../router.tsx';
import { clearSession } from '../session.ts';
import { ProblemView } from './problem.tsx';

/**
 * The two ways to sign out (README, "Security"). Tokens are stateless: signing out of this device
 * forgets its tokens, but a refresh token copied elsewhere, or another device's, keeps working
 * until it expires. Signing out everywhere (POST /auth/logout-all) ends every refresh token of
 * the user; access tokens already issued still live out their few minutes.
 */
export function useSignOut() {
  const queryClient = useQueryClient();
  /** Forgets this browser's session; the login page then says what else ended, if asked to. */
  const leave = (how?: 'device' | 'everywhere') => {
    clearSession();
    queryClient.clear();
    navigate(how ? `/login?signed-out=${how}` : '/login', { replace: true });
  };
  const everywhere = useMutation({
    mutationFn: () => mutate<void>('POST', '/auth/logout-all'),
    onSuccess: () => leave('everywhere'),
  });
  return { thisDevice: () => leave('device'), everywhere, leave };
}

/** The header's sign-out: says what each choice ends before the user picks one. */
export function SignOutPanel(props: { onCancel: () => void }) {
  const { thisDevice, everywhere } = useSignOut();
  return (
    <section className="card sign-out" aria-label="Sign out">
      <p>
        Signing out here ends this browser’s session only: other devices where you signed in stay signed in
        until their sessions expire. Sign out everywhere to end them all.
      </p>
      <div className="row">
        <button type="button" onClick={thisDevice}>
          Sign out of this device
        </button>
        <button type="button" className="secondary" onClick={() => everywhere.mutate()}>
          Sign out everywhere
        </button>
        <button type="button" className="link" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
      <ProblemView error={everywhere.error} />
    </section>
  );
}
