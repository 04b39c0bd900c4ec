-- SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
--
-- fleet_top.sql - the fleet's top talkers, from the hosts' spans that
-- `flowsketch export --format pg-sql` loaded (schema: user/flowsketch/pgsql.h).
--
--   psql -v k=20 -f dist/fleet_top.sql          (k defaults to 10)
--
-- The Count-Min sketch of the fleet is the cell-wise sum of the hosts'
-- sketches (they share parameters and secret: fs_fleet's foreign key), and
-- a flow's estimate in it is the minimum over rows of the summed cell at
-- its exported column (fs_candidate.cms_col; cells and columns are in the
-- fleet secret's export coordinates, user/lib/export_perm.h, so no secret
-- and no hash is needed here): fs_sketch_query() on the merged sketch, so the answer is
-- `flowsketch merge FILE... top`'s, count for count.  The flows ranked are
-- every candidate of any host (a flow heavy on the fleet but on no single
-- host's candidate list is missed, as it is by merge).  Each count is an
-- upper bound of the flow's packets (bytes) over all hosts, and with
-- probability 1 - e^-depth at most
--     bound = e / 2^log2w * (the hosts' packets summed)
-- above it (bound_packets; bound_bytes alike).  Ties rank as the daemon
-- ranks them (topk.h): packets, bytes, then the lower key.
--
-- Columns: src, dst, sport, dport, proto, family, packets, bytes, share
-- (of the fleet's packets), bound_packets, bound_bytes, reported_by (hosts
-- whose candidates it is), hosts (in the fleet).  No extension is needed.
\if :{?k}
\else
\set k 10
\endif
WITH fleet AS (
    SELECT f.depth, f.log2w, count(*) AS hosts,
           sum(s.packets) AS packets, sum(s.bytes) AS bytes
    FROM fs_fleet f JOIN fs_span s USING (depth, log2w, p, fingerprint)
    GROUP BY f.depth, f.log2w
), candidate AS (
    SELECT family, proto, src, dst, sport, dport, cms_row, cms_col,
           count(*) AS reported_by
    FROM fs_candidate
    GROUP BY family, proto, src, dst, sport, dport, cms_row, cms_col
), cell AS (
    SELECT cms_row, cms_col, sum(packets) AS packets, sum(bytes) AS bytes
    FROM fs_cms
    WHERE (cms_row, cms_col) IN (SELECT cms_row, cms_col FROM candidate)
    GROUP BY cms_row, cms_col
), estimate AS (
    SELECT c.family, c.proto, c.src, c.dst, c.sport, c.dport,
           min(coalesce(cell.packets, 0)) AS packets,
           min(coalesce(cell.bytes, 0)) AS bytes,
           max(c.reported_by) AS reported_by
    FROM candidate c LEFT JOIN cell USING (cms_row, cms_col)
    GROUP BY c.family, c.proto, c.src, c.dst, c.sport, c.dport
)
SELECT host(e.src) AS src, host(e.dst) AS dst, e.sport, e.dport, e.proto,
       e.family, e.packets, e.bytes,
       round(e.packets / nullif(f.packets, 0), 6) AS share,
       ceil(exp(1) / 2 ^ f.log2w * f.packets)::bigint AS bound_packets,
       ceil(exp(1) / 2 ^ f.log2w * f.bytes)::bigint AS bound_bytes,
       e.reported_by, f.hosts
FROM estimate e CROSS JOIN fleet f
ORDER BY e.packets DESC, e.bytes DESC, e.family, e.proto, e.sport, e.dport,
         e.src, e.dst
LIMIT :k;
