// Sluice operator console: native ES modules, no framework, no build step, nothing fetched from
// anywhere but this admin app. This entry lists the pages and starts the router; every value
// that comes from the API reaches the page as text (see dom.js), never as HTML.

import { onTokenRefused } from './api.js';
import { auditPage } from './audit.js';
import { deadLettersPage } from './dead-letters.js';
import { deliveriesPage } from './deliveries.js';
import { deliveryPage } from './delivery.js';
import { destinationByIdPage, destinationPage } from './destination.js';
import { destinationsPage } from './destinations.js';
import { healthPage } from './health.js';
import { livePage } from './live.js';
import { signOut, startRouter } from './router.js';
import { sourcePage, sourcesPage } from './sources.js';

const PAGES = [
  { match: ['sources'], nav: 'sources', render: sourcesPage },
  { match: ['sources', '*'], nav: 'sources', render: sourcePage },
  { match: ['sources', '*', 'destination'], nav: 'sources', render: destinationPage },
  { match: ['sources', '*', 'destinations'], nav: 'sources', render: destinationsPage },
  {
    match: ['sources', '*', 'destinations', '*'],
    nav: 'sources',
    render: destinationByIdPage,
  },
  {
    match: ['sources', '*', 'destinations', '*', 'health'],
    nav: 'sources',
    render: healthPage,
  },
  { match: ['deliveries'], nav: 'deliveries', render: deliveriesPage },
  { match: ['deliveries', '*'], nav: 'deliveries', render: deliveryPage },
  { match: ['dead'], nav: 'dead', render: deadLettersPage },
  { match: ['live'], nav: 'live', render: livePage },
  { match: ['audit'], nav: 'audit', render: auditPage },
];

onTokenRefused(signOut);
document.getElementById('sign-out').addEventListener('click', () => {
  signOut();
  history.replaceState(null, '', '#/sources');
});
startRouter(PAGES);
