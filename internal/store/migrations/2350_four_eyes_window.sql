-- The cumulative four-eyes rule's window is a merchant's setting, per mode,
-- beside the approval threshold. NULL: the default window (24 hours).
ALTER TABLE merchant_settings ADD COLUMN approval_window_seconds BIGINT;
-- A settings change proposes the window too. NULL: the change leaves the
-- window as it is (every change asked for before the window existed).
ALTER TABLE settings_changes ADD COLUMN approval_window_seconds BIGINT;
