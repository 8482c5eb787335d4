#!/bin/bash
# EMR bootstrap action for hudi.engine hudi-cdc (docs/emr.md, "hudi-cdc's streamer on EMR").
# hudi-cdc's streamer job needs fastavro, hudi (hudi-rs) and javaproperties on the Python that runs its driver; EMR 7's
# default python3 is 3.9, and the hudi-rs wheels need Python 3.10+, so this installs Amazon Linux 2023's
# python3.11 with both packages on every node. The rendered spark-submit runs the job with
# --conf spark.pyspark.python=/usr/bin/python3.11 (and spark.pyspark.driver.python).
#   aws s3 cp emr/bootstrap-hudi-cdc-job.sh s3://<bucket>/hudi-cdc/bootstrap/
#   aws emr create-cluster ... --bootstrap-actions Path=s3://<bucket>/hudi-cdc/bootstrap/bootstrap-hudi-cdc-job.sh
set -euo pipefail
sudo dnf install -y python3.11 python3.11-pip
sudo /usr/bin/python3.11 -m pip install --no-cache-dir "fastavro>=1.9" "hudi==0.5.0" "javaproperties>=0.8"
/usr/bin/python3.11 -c "import fastavro, hudi, javaproperties; print('hudi-cdc job deps:', fastavro.__version__, hudi.__version__)"
