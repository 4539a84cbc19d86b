//! JSON Schemas of every `--json` report, generated from the Rust types.
//! CI runs `forest schemas --check` so the files in `schemas/` never drift.

use anyhow::{bail, Result};
use std::path::Path;

fn all() -> Vec<(&'static str, schemars::Schema)> {
    vec![
        ("garden-report.schema.json", schemars::schema_for!(forest_gardener::GardenReport)),
        ("prepare-report.schema.json", schemars::schema_for!(forest_gardener::PrepareReport)),
        ("lint-report.schema.json", schemars::schema_for!(forest_model::lint::LintReport)),
        ("locate-result.schema.json", schemars::schema_for!(forest_catalog::LocateResult)),
        ("reindex-report.schema.json", schemars::schema_for!(crate::reindex_cmd::ReindexReport)),
        ("heat-report.schema.json", schemars::schema_for!(crate::heat_cmd::HeatReport)),
        ("curate-pending-report.schema.json", schemars::schema_for!(forest_derived::curation::PendingReport)),
        ("rollup-report.schema.json", schemars::schema_for!(forest_gardener::rollup::RollupReport)),
        ("ranger-report.schema.json", schemars::schema_for!(forest_ranger::RangerReport)),
        ("health-report.schema.json", schemars::schema_for!(forest_ranger::HealthReport)),
        ("ranger-config.schema.json", schemars::schema_for!(forest_ranger::RangerConfig)),
        ("gardener-source.schema.json", schemars::schema_for!(forest_derived::config::SourceConfig)),
        ("fetch-report.schema.json", schemars::schema_for!(forest_derived::tiers::FetchReport)),
        ("prefetch-report.schema.json", schemars::schema_for!(forest_derived::tiers::PrefetchReport)),
        ("snapshot-create-report.schema.json", schemars::schema_for!(forest_snapshot::CreateReport)),
        ("snapshot-restore-report.schema.json", schemars::schema_for!(forest_snapshot::RestoreReport)),
        ("hunt-report.schema.json", schemars::schema_for!(crate::hunt_cmd::HuntReport)),
        ("bench-report.schema.json", schemars::schema_for!(forest_navigator::bench::BenchReport)),
    ]
}

/// Write the schemas into `out`, or with `check` compare and fail on drift.
pub fn write_or_check(out: &Path, check: bool) -> Result<u8> {
    let mut drift = vec![];
    for (name, schema) in all() {
        let text = format!("{}\n", serde_json::to_string_pretty(&schema)?);
        let path = out.join(name);
        if check {
            if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
                drift.push(name);
            }
        } else {
            forest_fs::atomic_write(&path, text.as_bytes())?;
        }
    }
    if !drift.is_empty() {
        bail!("schemas drifted from the Rust types (run `forest schemas`): {}", drift.join(", "));
    }
    Ok(0)
}
