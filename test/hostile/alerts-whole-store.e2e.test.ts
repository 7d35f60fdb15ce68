/**
 * The alert manager's whole-store cases, each on a daemon holding 200,000 alerts: GET
 * /api/v2/alerts/groups and the journal's fold (alerts-loop-stalls.cases.ts), concurrent GET
 * /api/v2/alerts (alerts-memory.cases.ts). They measure the CPU one turn of their daemon's loop
 * uses, and share this file so that their daemons run one after the other: side by side on two
 * cores, one case saw a turn of 2.1-3.0 s in the other's measuring window (each passes alone and in
 * turn; what that turn was is not found yet).
 */
import './alerts-loop-stalls.cases.js';
import './alerts-memory.cases.js';
