package main

// The settlement report takes any IANA time zone; embedding the zone
// database keeps that true on machines without /usr/share/zoneinfo
// (containers built from scratch).
import _ "time/tzdata"
