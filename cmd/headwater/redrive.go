package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/headwater-data/headwater/ingest/kafkaio"
	"github.com/headwater-data/headwater/ingest/redrive"
)

type redriveCmd struct {
	EventIDs []string       `name:"event-id" help:"Event id(s) to re-drive, as shown by event(id) or the gateway's 4xx answer." required:""`
	Kafka    kafkaio.Config `embed:"" prefix:"kafka-"`
}

func (r redriveCmd) Validate() error {
	if len(r.EventIDs) == 0 {
		return errors.New("redrive.event-id: at least one event id is required")
	}
	return nil
}

func (r redriveCmd) Run(rc *runCtx) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	p, err := kafkaio.NewProducer(r.Kafka)
	if err != nil {
		return err
	}
	defer closeLogged(rc.log, "producer", p.Close)
	res, err := redrive.Run(ctx, r.Kafka, p, redrive.ByEventIDs(r.EventIDs...))
	if err != nil {
		return err
	}
	rc.log.Info("redrive done", "scanned", res.Scanned, "redriven", res.Redriven, "noPayload", res.NoPayload)
	if _, err := fmt.Fprintf(rc.stdout, "re-drove %d event(s); %d without a payload to re-drive; scanned %d quarantine records\n",
		len(res.Redriven), len(res.NoPayload), res.Scanned); err != nil {
		return err
	}
	if len(res.Redriven)+len(res.NoPayload) < len(r.EventIDs) {
		return fmt.Errorf("some event ids are not on the quarantine topic %s", r.Kafka.QuarantineTopic)
	}
	return nil
}
