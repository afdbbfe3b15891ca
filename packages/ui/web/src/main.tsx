import { render } from 'preact';
import { App } from './App.js';
import { finishSignIn } from './oauth.js';

// Coming back from the authorization server, the code is exchanged before anything asks bermd.
void finishSignIn().then((returned) => render(<App returned={returned} />, document.getElementById('app')!));
