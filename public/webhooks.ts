import express, { type Router } from 'express';
import type { AppContext } from '../api/context';
import { receiveWebhook } from '../integrations/webhooks';

/**
 * Inbound provider notifications, outside /api/v1 (the provider signs them; it has no API key).
 * The body is kept raw: the signature covers its exact bytes.
 */
const RAW = express.raw({ type: () => true, limit: '512kb' });

export default function webhookRoutes(router: Router, app: AppContext): void {
  router.post('/webhooks/:provider/:siteId', RAW, async (req, res) => {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const out = await receiveWebhook(app, String(req.params.provider), String(req.params.siteId), raw, req.get('stripe-signature'));
    res.status(200).json(out);
  });
}
