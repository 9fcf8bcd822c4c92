/**
 * A tiny invented conversation in LoCoMo's file shape (two speakers, dated sessions, an image turn, a
 * stray date key, questions of all five categories with the evidence quirks of the real file), for tests
 * and smoke runs. Invented here: none of it comes from LoCoMo, whose data must never enter the repository.
 */
export function inventedLocomoFile(): unknown[] {
  return [
    {
      sample_id: 'invented-1',
      conversation: {
        speaker_a: 'Ava',
        speaker_b: 'Ben',
        session_1_date_time: '1:56 pm on 8 May, 2023',
        session_1: [
          {
            speaker: 'Ava',
            dia_id: 'D1:1',
            text: 'Hi Ben! I finally adopted a dog last weekend, a beagle named Pixel.',
          },
          {
            speaker: 'Ben',
            dia_id: 'D1:2',
            text: 'Congrats! I spent Saturday repairing my old sailboat at the marina.',
          },
          {
            speaker: 'Ava',
            dia_id: 'D1:3',
            text: 'Pixel already loves the park near the library.',
            blip_caption: 'a photo of a beagle on green grass',
            img_url: ['https://example.invalid/pixel.jpg'],
          },
          { speaker: 'Ben', dia_id: 'D1:4', text: "Cute! I'm reading a novel about lighthouse keepers." },
        ],
        session_2_date_time: '10:05 am on 20 June, 2023',
        session_2: [
          { speaker: 'Ava', dia_id: 'D2:1', text: 'I started pottery classes on Tuesday evenings.' },
          {
            speaker: 'Ben',
            dia_id: 'D2:2',
            text: "Nice. My sailboat passed inspection, so I'm sailing to the island in July.",
          },
          { speaker: 'Ava', dia_id: 'D2:3', text: 'Pottery is calming; I made a blue mug.' },
          { speaker: 'Ben', dia_id: 'D2:4', text: 'Bring the mug on the boat trip!' },
        ],
        session_3_date_time: '7:30 pm on 2 August, 2023',
        session_3: [
          { speaker: 'Ava', dia_id: 'D3:1', text: 'Pixel learned to fetch the frisbee.' },
          { speaker: 'Ben', dia_id: 'D3:2', text: 'The island trip was amazing, we saw dolphins.' },
          { speaker: 'Ava', dia_id: 'D3:3', text: "Dolphins! I'm jealous." },
          { speaker: 'Ben', dia_id: 'D3:4', text: 'Next time you and Pixel should come along.' },
        ],
        // A date without a session, as conv-26 has: sessions come from the session_<n> arrays only.
        session_4_date_time: '9:00 am on 1 September, 2023',
      },
      qa: [
        {
          question: 'What kind of dog did Ava adopt?',
          answer: 'a beagle named Pixel',
          evidence: ['D1:1'],
          category: 4,
        },
        { question: 'When did Ava start pottery classes?', answer: 'June 2023', evidence: ['D2:1'], category: 2 },
        {
          question: 'What has Ben done with his sailboat?',
          answer: 'repaired it, passed inspection, sailed to the island',
          evidence: ['D1:2; D2:2', 'D:3:2'],
          category: 1,
        },
        { question: 'Would Ava enjoy a trip on the water?', answer: 'Likely yes', evidence: [], category: 3 },
        {
          question: 'What did Ben make in pottery class?',
          adversarial_answer: 'a blue mug',
          evidence: ['D2:03'],
          category: 5,
        },
        { question: 'In what year did Ava adopt Pixel?', answer: 2023, evidence: ['D1:1', 'D9:9', 'D'], category: 4 },
      ],
      observation: {},
      session_summary: {},
      event_summary: {},
    },
  ];
}
