package api

// APIVersion names the version of the API's grammar this build speaks, as the
// date it was fixed: every response carries it in the API-Version header.
// Within one version fields and endpoints are only added; a rename keeps the
// old name working, deprecated, until the next version (CHANGELOG.md).
const APIVersion = "2026-11-29"
