-- A device belongs to the merchant that first bound it, in both modes, even
-- after that merchant's terminal is deregistered: binding and reads look up
-- every terminal (of any status) that holds the device key.

CREATE INDEX terminals_device_owner ON terminals (ksn_key_id, merchant_id);
