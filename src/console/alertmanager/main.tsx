/** The alert manager's web console, at / of its listener, with Alertmanager's hash routes. */
import { render } from 'preact';
import '../kit/theme.css';
import { TopBar } from '../kit/components.js';
import { useHashRoute } from '../kit/router.js';

function App() {
  const route = useHashRoute();
  const links = [
    { href: '#/alerts', label: 'Alerts', current: route.path === '/' || route.path.startsWith('/alerts') },
    { href: '#/silences', label: 'Silences', current: route.path.startsWith('/silences') },
    { href: '#/status', label: 'Status', current: route.path === '/status' },
  ];
  return (
    <>
      <TopBar brand="Alertmanager" links={links} />
      <main id="main">
        <h1>Alerts</h1>
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
