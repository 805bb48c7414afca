/** Data of one `erp-push` job: the push row carries the rest, so no credential or data.json goes to Redis. */
export interface ErpPushJobData {
  tenant_id: string;
  push_id: string;
}
