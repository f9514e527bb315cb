import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Router } from 'express';
import type { AppContext } from './context';
import type { RouteModule } from './route';
import sitesRoutes from './routes/sites';
import teamRoutes from './routes/team';
import '../cli/admin/events';
import '../cli/admin/seed';
import { collectionModule } from '../ingest/live/module';

/**
 * The list of what the service serves. A feature adds itself here with one line:
 * API_ROUTES       routes under /api/v1 (bearer key, scopes, site reach handled by RouteRegistrar)
 * PUBLIC_ROUTES    pages and feeds outside the API (tracker script, share boards, widgets)
 * RAW_HANDLERS     plain node:http handlers that run before Express (the hot collection endpoint)
 */
export const API_ROUTES: RouteModule[] = [sitesRoutes, teamRoutes];

export type PublicModule = (router: Router, app: AppContext) => void;
export const PUBLIC_ROUTES: PublicModule[] = [];

/** Returns true when it handled the request. */
export type RawHandler = (req: IncomingMessage, res: ServerResponse) => boolean;
export type RawModule = (app: AppContext) => RawHandler;
export const RAW_HANDLERS: RawModule[] = [collectionModule];
