import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Router } from 'express';
import type { AppContext } from './context';
import type { RouteModule } from './route';
import sitesRoutes from './routes/sites';
import teamRoutes from './routes/team';
import '../cli/admin/events';
import '../cli/admin/seed';
import { collectionModule } from '../ingest/live/module';
import trackerRoute from '../tracker/route';
import reportRoutes from './routes/reports';
import goalRoutes from './routes/goals';
import notesRoutes from './routes/notes';
import funnelsRoutes from './routes/funnels';
import alertsRoutes from './routes/alerts';
import shareRoutes from './routes/share';
import widgetRoutes from './routes/widget';
import publicAssets from '../public/assets';
import sharePublic from '../public/share';
import widgetPublic from '../public/widget';
import webhookRoutes from '../public/webhooks';
import integrationRoutes from './routes/integrations';

/**
 * The list of what the service serves. A feature adds itself here with one line:
 * API_ROUTES       routes under /api/v1 (bearer key, scopes, site reach handled by RouteRegistrar)
 * PUBLIC_ROUTES    pages and feeds outside the API (tracker script, share boards, widgets)
 * RAW_HANDLERS     plain node:http handlers that run before Express (the hot collection endpoint)
 */
export const API_ROUTES: RouteModule[] = [sitesRoutes, teamRoutes];
API_ROUTES.push(reportRoutes);
API_ROUTES.push(goalRoutes);
API_ROUTES.push(notesRoutes);
API_ROUTES.push(funnelsRoutes);
API_ROUTES.push(alertsRoutes);
API_ROUTES.push(shareRoutes);
API_ROUTES.push(widgetRoutes);
API_ROUTES.push(integrationRoutes);

export type PublicModule = (router: Router, app: AppContext) => void;
export const PUBLIC_ROUTES: PublicModule[] = [];
PUBLIC_ROUTES.push(publicAssets);
PUBLIC_ROUTES.push(sharePublic);
PUBLIC_ROUTES.push(widgetPublic);
PUBLIC_ROUTES.push(trackerRoute);
PUBLIC_ROUTES.push(webhookRoutes);

/** Returns true when it handled the request. */
export type RawHandler = (req: IncomingMessage, res: ServerResponse) => boolean;
export type RawModule = (app: AppContext) => RawHandler;
export const RAW_HANDLERS: RawModule[] = [collectionModule];
